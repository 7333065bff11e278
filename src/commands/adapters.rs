//! `qsweep adapters`: every GPU adapter wgpu can see.

use anyhow::Result;

use qsweep_core::output;
use qsweep_gpu::list_adapters;

/// `qsweep adapters`: every adapter wgpu sees.
pub fn adapters() -> Result<()> {
    if let Some(why) = qsweep_backend::backend::gpu_out_of_reach() {
        return output::to_stdout(format!(
            "GPU adapters not probed: {why} (qsweep will use its CPU engine)\n"
        ));
    }
    let list = list_adapters();
    if list.is_empty() {
        return output::to_stdout("no GPU adapters (qsweep will use its CPU engine)\n");
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|a| {
            vec![
                a.name.clone(),
                a.backend.clone(),
                a.device_type.clone(),
                a.driver.clone(),
            ]
        })
        .collect();
    output::to_stdout(output::align(&["name", "backend", "type", "driver"], &rows))
}
