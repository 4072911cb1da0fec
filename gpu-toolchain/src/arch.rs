//! GPU architecture names and what they imply.
use crate::Error;

/// The two GPU vendors: what an arch name means, which target it builds for,
/// and (in the launcher) which driver API runs its code objects. Shown as
/// `AMD` / `NVIDIA`; `amd` / `nvidia` in JSON (`gpurun devices --json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Amd,
    Nvidia,
}

impl Vendor {
    /// The driver API name: `HIP` or `CUDA`.
    pub fn api(self) -> &'static str {
        match self {
            Vendor::Amd => "HIP",
            Vendor::Nvidia => "CUDA",
        }
    }

    pub fn other(self) -> Vendor {
        match self {
            Vendor::Amd => Vendor::Nvidia,
            Vendor::Nvidia => Vendor::Amd,
        }
    }

    /// File stem of the target spec in `targets/` (and cargo's target name).
    pub fn target_name(self) -> &'static str {
        match self {
            Vendor::Amd => "amdgcn-amd-amdhsa-std",
            Vendor::Nvidia => "nvptx64-nvidia-cuda-std",
        }
    }

    /// File extension of the code object.
    pub fn code_object_ext(self) -> &'static str {
        match self {
            Vendor::Amd => "elf",
            Vendor::Nvidia => "ptx",
        }
    }
}

impl std::fmt::Display for Vendor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Vendor::Amd => "AMD",
            Vendor::Nvidia => "NVIDIA",
        })
    }
}

/// A GPU architecture: `gfx90a`, `gfx942`, `gfx1100`, `sm_90`, ...
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arch {
    pub name: String,
    pub vendor: Vendor,
}

impl Arch {
    pub fn parse(name: &str) -> Result<Arch, Error> {
        let bad = || Error::UnknownArch { name: name.to_string() };
        if let Some(rest) = name.strip_prefix("gfx") {
            if !(3..=4).contains(&rest.len()) || !rest.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(bad());
            }
            // gfx9xx: GCN/CDNA; gfx10xx-gfx12xx: RDNA.
            let major: u32 = rest[..rest.len() - 2].parse().map_err(|_| bad())?;
            if !(9..=12).contains(&major) {
                return Err(bad());
            }
            return Ok(Arch { name: name.to_string(), vendor: Vendor::Amd });
        }
        if let Some(rest) = name.strip_prefix("sm_") {
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let suffix = &rest[digits.len()..];
            let sm: u32 = digits.parse().map_err(|_| bad())?;
            // Volta (sm_70) is the oldest with independent thread scheduling and
            // `nanosleep`, which the runtime needs.
            if sm < 70 || !(suffix.is_empty() || suffix == "a") {
                return Err(Error::ArchTooOld { name: name.to_string() });
            }
            return Ok(Arch { name: name.to_string(), vendor: Vendor::Nvidia });
        }
        Err(bad())
    }

    /// Lanes per warp/wavefront for this arch: [`amd_default_lanes`] on
    /// AMD, 32 on NVIDIA.
    pub fn lanes(&self) -> u32 {
        match self.vendor {
            Vendor::Amd => amd_default_lanes(&self.name),
            Vendor::Nvidia => 32,
        }
    }
}

/// Lanes per wavefront of an AMD processor (`gfx90a`, `gfx1100`,
/// `gfx9-4-generic`) when nothing else says: 64 on gfx9 and older (GCN,
/// CDNA), 32 on gfx10 and newer (RDNA, wave32 by default). The one rule:
/// [`Arch::lanes`] builds with it and the launcher reads code objects with it.
pub fn amd_default_lanes(arch: &str) -> u32 {
    match arch_generation(arch) {
        Some(g) if g >= 10 => 32,
        _ => 64,
    }
}

/// The major generation of `gfx…` (9 for `gfx90a`, 11 for `gfx1100`).
fn arch_generation(arch: &str) -> Option<u32> {
    let rest = arch.strip_prefix("gfx")?;
    if let Some(generic) = rest.strip_suffix("-generic") {
        return generic.split('-').next()?.parse().ok();
    }
    // gfxNNN: one-digit major followed by two hex digits; gfxNNNN: two-digit major.
    let digits = rest.len();
    let major = match digits {
        3 => &rest[..1],
        4 => &rest[..2],
        _ => return None,
    };
    major.parse().ok()
}


#[cfg(test)]
mod tests {
    use super::*;

    /// How `gpurun devices` and its `--json` name a vendor.
    #[test]
    fn vendor_names() {
        assert_eq!((Vendor::Amd.to_string(), Vendor::Nvidia.to_string()), ("AMD".into(), "NVIDIA".into()));
        assert_eq!(serde_json::to_string(&[Vendor::Amd, Vendor::Nvidia]).unwrap(), r#"["amd","nvidia"]"#);
        assert_eq!((Vendor::Amd.api(), Vendor::Nvidia.api()), ("HIP", "CUDA"));
        assert_eq!(Vendor::Amd.other(), Vendor::Nvidia);
    }

    #[test]
    fn parses_the_archs_we_build_for() {
        for (name, vendor, lanes) in [
            ("gfx90a", Vendor::Amd, 64),
            ("gfx942", Vendor::Amd, 64),
            ("gfx1100", Vendor::Amd, 32),
            ("sm_80", Vendor::Nvidia, 32),
            ("sm_90", Vendor::Nvidia, 32),
            ("sm_90a", Vendor::Nvidia, 32),
        ] {
            let a = Arch::parse(name).unwrap();
            assert_eq!((a.vendor, a.lanes()), (vendor, lanes), "{name}");
        }
    }

    #[test]
    fn lanes_by_generation() {
        assert_eq!(amd_default_lanes("gfx90a"), 64);
        assert_eq!(amd_default_lanes("gfx942"), 64);
        assert_eq!(amd_default_lanes("gfx906"), 64);
        assert_eq!(amd_default_lanes("gfx1030"), 32);
        assert_eq!(amd_default_lanes("gfx1100"), 32);
        assert_eq!(amd_default_lanes("gfx1201"), 32);
        assert_eq!(amd_default_lanes("gfx9-4-generic"), 64);
        assert_eq!(amd_default_lanes("gfx11-generic"), 32);
    }

    #[test]
    fn rejects_unknown_and_too_old_archs() {
        for name in ["", "gfx", "gfx8", "gfx803", "sm_60", "sm_9x", "x86_64", "gfxzzz"] {
            assert!(Arch::parse(name).is_err(), "{name}");
        }
        let old = Arch::parse("sm_61").unwrap_err().to_string();
        assert_eq!(
            old,
            "unknown GPU arch `sm_61`: use an AMD gfx name (gfx90a, gfx942, gfx1100, ...) or an NVIDIA sm name \
             (sm_70 ... sm_120, e.g. sm_90 for H100); sm_70 (Volta) or newer is needed"
        );
        assert_eq!(Arch::parse("sm_61").unwrap_err().exit_code(), 2);
    }
}
