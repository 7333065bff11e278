//! Finding an adapter: the wgpu instance, which backends are probed, the
//! description `qsweep adapters` and the CSV's `backend` column show, and
//! the choice `--adapter` makes.
//!
//! Kept apart from the engine so that listing adapters never opens a device.

use anyhow::{anyhow, Result};

/// Which adapter to use.
#[derive(Clone, Debug, Default)]
pub struct AdapterChoice {
    /// Case-insensitive substring of the adapter name.
    pub name: Option<String>,
}

/// Description of an adapter, for `qsweep adapters` and the CSV.
#[derive(Clone, Debug)]
pub struct AdapterDesc {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub is_software: bool,
}

impl AdapterDesc {
    pub(super) fn from_info(info: &wgpu::AdapterInfo) -> Self {
        let driver = if info.driver_info.is_empty() {
            info.driver.clone()
        } else {
            format!("{} {}", info.driver, info.driver_info)
        };
        Self {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend).to_lowercase(),
            device_type: format!("{:?}", info.device_type),
            driver,
            is_software: info.device_type == wgpu::DeviceType::Cpu,
        }
    }

    /// `backend:name`, the CSV's `backend` column for GPU rows.
    pub fn label(&self) -> String {
        format!("{}:{}", self.backend, self.name)
    }
}

pub(super) fn instance() -> wgpu::Instance {
    // Mesa's device-select layer probes Wayland/X11 for a display and prints
    // an error on headless machines; qsweep never presents, so skip it.
    static QUIET_MESA: std::sync::Once = std::sync::Once::new();
    QUIET_MESA.call_once(|| {
        if std::env::var_os("NODEVICE_SELECT").is_none() {
            std::env::set_var("NODEVICE_SELECT", "1");
        }
    });
    // Respects WGPU_BACKEND and the other WGPU_* variables.
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// Adapters to consider: those of `WGPU_BACKEND` when set; otherwise the
/// primary backends (Vulkan, Metal, DX12), and GL only where none of them
/// has an adapter (probing GL without a display spams stderr on Linux).
fn enumerate(inst: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    if let Some(backends) = wgpu::Backends::from_env() {
        return pollster::block_on(inst.enumerate_adapters(backends));
    }
    let primary = pollster::block_on(inst.enumerate_adapters(wgpu::Backends::PRIMARY));
    if !primary.is_empty() {
        return primary;
    }
    pollster::block_on(inst.enumerate_adapters(wgpu::Backends::SECONDARY))
}

/// Every adapter qsweep can use, in enumeration order.
pub fn list_adapters() -> Vec<AdapterDesc> {
    enumerate(&instance())
        .iter()
        .map(|a| AdapterDesc::from_info(&a.get_info()))
        .collect()
}

/// The adapter `choice` names, or wgpu's high-performance choice (hardware
/// before software).
pub(super) fn choose(inst: &wgpu::Instance, choice: &AdapterChoice) -> Result<wgpu::Adapter> {
    let mut adapters = enumerate(inst);
    match &choice.name {
        Some(name) => {
            let needle = name.to_lowercase();
            adapters
                .into_iter()
                .find(|a| a.get_info().name.to_lowercase().contains(&needle))
                .ok_or_else(|| {
                    anyhow::Error::from(crate::UsageError(format!(
                        "--adapter: no adapter matches '{name}'; expected part of a name that \
                         `qsweep adapters` lists"
                    )))
                })
        }
        None => {
            // Hardware first (discrete, integrated, virtual), then software.
            adapters.sort_by_key(|a| match a.get_info().device_type {
                wgpu::DeviceType::DiscreteGpu => 0,
                wgpu::DeviceType::IntegratedGpu => 1,
                wgpu::DeviceType::VirtualGpu => 2,
                wgpu::DeviceType::Other => 3,
                wgpu::DeviceType::Cpu => 4,
            });
            adapters
                .into_iter()
                .next()
                .ok_or_else(|| anyhow!("no GPU adapter found"))
        }
    }
}
