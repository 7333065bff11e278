//! Finding an adapter: the wgpu instance, which backends are probed, the
//! description `qsweep adapters` and the CSV's `backend` column show, and
//! the choice `--adapter` makes.
//!
//! Kept apart from the engine so that listing adapters never opens a device.

use anyhow::{anyhow, bail, Result};

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
    /// The PCI vendor ID (wgpu's `AdapterInfo::vendor`): 0x1002 is AMD.
    pub vendor: u32,
    /// The device runs on the CPU (wgpu's `DeviceType::Cpu`: lavapipe,
    /// llvmpipe, WARP, SwiftShader), whose loops are capped
    /// ([`LOOP_BUDGET`](super::LOOP_BUDGET)).
    pub is_software: bool,
    /// How the engine plans for it: as the adapter is, or as
    /// `QSWEEP_ADAPTER_CLASS` says ([`AdapterClass::from_env`]).
    pub class: AdapterClass,
}

/// What the engine plans for: a software adapter (passes within its loop
/// cap, heaps in private memory, one-server segments in turn) or a hardware
/// one (timed passes, small heaps in workgroup memory, segments side by
/// side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterClass {
    Software,
    Hardware,
}

impl AdapterClass {
    /// `QSWEEP_ADAPTER_CLASS` (`hardware` or `software`), which makes the
    /// engine plan for any adapter as for that class: CI runs lavapipe as
    /// if it were a hardware GPU, so the hardware paths are tested (and must
    /// give the software plan's numbers to the bit). A software adapter
    /// planned as hardware still keeps every pass within its loop cap.
    /// Unset: the adapter's own class.
    pub fn from_env() -> Result<Option<Self>> {
        env_choice(
            "QSWEEP_ADAPTER_CLASS",
            &[("hardware", Self::Hardware), ("software", Self::Software)],
        )
    }
}

/// The value of the environment variable `var` among `choices` (its
/// spellings and what each means): `None` when unset or empty, an error
/// naming the variable and the choices otherwise. One reader for the
/// engine's test switches (`QSWEEP_ADAPTER_CLASS`, `QSWEEP_GPU_LIMITS`,
/// `QSWEEP_GPU_TIMESTAMPS`, `QSWEEP_SEGMENT_LAYOUT`).
pub(super) fn env_choice<T: Copy>(var: &str, choices: &[(&str, T)]) -> Result<Option<T>> {
    let value = match std::env::var(var) {
        Err(_) => return Ok(None),
        Ok(v) if v.is_empty() => return Ok(None),
        Ok(v) => v,
    };
    if let Some(&(_, choice)) = choices.iter().find(|(name, _)| *name == value) {
        return Ok(Some(choice));
    }
    let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
    let expected = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    bail!("{var}: expected {expected}, got {value:?}")
}

/// Which limits a device is opened with (`QSWEEP_GPU_LIMITS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceLimits {
    /// Everything the adapter offers (the default).
    Adapter,
    /// WebGPU's baseline, `wgpu::Limits::default()` (`webgpu`): 256
    /// invocations and 16 KiB of workgroup memory per workgroup, 128 MiB
    /// per storage binding, 8 storage buffers per stage.
    WebGpu,
    /// wgpu's `Limits::downlevel_defaults()` (`downlevel`: GLES 3.1 and
    /// minimal Vulkan devices): 4 storage buffers per stage.
    Downlevel,
}

impl DeviceLimits {
    /// `QSWEEP_GPU_LIMITS`: `adapter` (or unset), `webgpu` or `downlevel`,
    /// so that every GPU test can run as on a small device.
    pub fn from_env() -> Result<Self> {
        Ok(env_choice(
            "QSWEEP_GPU_LIMITS",
            &[
                ("adapter", Self::Adapter),
                ("webgpu", Self::WebGpu),
                ("downlevel", Self::Downlevel),
            ],
        )?
        .unwrap_or(Self::Adapter))
    }

    /// The name `QSWEEP_GPU_LIMITS` takes (and the `.meta.json` records).
    pub fn name(self) -> &'static str {
        match self {
            Self::Adapter => "adapter",
            Self::WebGpu => "webgpu",
            Self::Downlevel => "downlevel",
        }
    }

    /// The limits to request of an adapter that has `adapter`: never more
    /// than it has.
    pub fn limits(self, adapter: &wgpu::Limits) -> wgpu::Limits {
        match self {
            Self::Adapter => adapter.clone(),
            Self::WebGpu => wgpu::Limits::default().or_worse_values_from(adapter),
            Self::Downlevel => wgpu::Limits::downlevel_defaults().or_worse_values_from(adapter),
        }
    }
}

impl AdapterDesc {
    /// The adapter `info` describes; its planning class from
    /// `QSWEEP_ADAPTER_CLASS` where set (a value it cannot read plans as
    /// the adapter is: `GpuEngine::open` reports the bad value).
    pub(super) fn from_info(info: &wgpu::AdapterInfo) -> Self {
        let is_software = info.device_type == wgpu::DeviceType::Cpu;
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
            vendor: info.vendor,
            is_software,
            class: AdapterClass::from_env()
                .ok()
                .flatten()
                .unwrap_or(if is_software {
                    AdapterClass::Software
                } else {
                    AdapterClass::Hardware
                }),
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
                    anyhow::Error::from(qsweep_core::UsageError(format!(
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
