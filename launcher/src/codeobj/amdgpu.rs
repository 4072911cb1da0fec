//! AMDGPU code objects: the `e_flags` processor table, target-feature bits,
//! and the compatibility rule between a code object and a device target id
//! (`gfx90a:sramecc+:xnack-`).
//!
//! Values are those of `EF_AMDGPU_MACH_*` in LLVM's `BinaryFormat/ELF.h`
//! (facts of the ELF ABI, written out here; the `object` crate lacks them).

/// Processor selection mask of `e_flags`.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
/// XNACK selection mask (code object v4+).
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// SRAMECC selection mask (code object v4+).
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// Generic-target version, the top byte.
pub const EF_AMDGPU_GENERIC_VERSION_SHIFT: u32 = 24;
/// `e_ident[EI_OSABI]` of HSA code objects.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;

/// `(EF_AMDGPU_MACH_* value, processor name)`.
const MACHS: &[(u32, &str)] = &[
    (0x020, "gfx600"),
    (0x021, "gfx601"),
    (0x022, "gfx700"),
    (0x023, "gfx701"),
    (0x024, "gfx702"),
    (0x025, "gfx703"),
    (0x026, "gfx704"),
    (0x028, "gfx801"),
    (0x029, "gfx802"),
    (0x02a, "gfx803"),
    (0x02b, "gfx810"),
    (0x02c, "gfx900"),
    (0x02d, "gfx902"),
    (0x02e, "gfx904"),
    (0x02f, "gfx906"),
    (0x030, "gfx908"),
    (0x031, "gfx909"),
    (0x032, "gfx90c"),
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03a, "gfx602"),
    (0x03b, "gfx705"),
    (0x03c, "gfx805"),
    (0x03d, "gfx1035"),
    (0x03e, "gfx1034"),
    (0x03f, "gfx90a"),
    // 0x040 and 0x04b were gfx940/gfx941 (now reserved); old objects carry them.
    (0x040, "gfx940"),
    (0x041, "gfx1100"),
    (0x042, "gfx1013"),
    (0x043, "gfx1150"),
    (0x044, "gfx1103"),
    (0x045, "gfx1036"),
    (0x046, "gfx1101"),
    (0x047, "gfx1102"),
    (0x048, "gfx1200"),
    (0x049, "gfx1250"),
    (0x04a, "gfx1151"),
    (0x04b, "gfx941"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x04f, "gfx950"),
    (0x051, "gfx9-generic"),
    (0x052, "gfx10-1-generic"),
    (0x053, "gfx10-3-generic"),
    (0x054, "gfx11-generic"),
    (0x055, "gfx1152"),
    (0x058, "gfx1153"),
    (0x059, "gfx12-generic"),
    (0x05f, "gfx9-4-generic"),
];

/// Processors each generic target runs on.
const GENERIC_MEMBERS: &[(&str, &[&str])] = &[
    ("gfx9-generic", &["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"]),
    ("gfx9-4-generic", &["gfx940", "gfx941", "gfx942", "gfx950"]),
    ("gfx10-1-generic", &["gfx1010", "gfx1011", "gfx1012", "gfx1013"]),
    ("gfx10-3-generic", &["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"]),
    ("gfx11-generic", &["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
    ("gfx12-generic", &["gfx1200", "gfx1201"]),
];

/// The processor name of an `EF_AMDGPU_MACH_*` value.
pub fn mach_name(mach: u32) -> Option<&'static str> {
    MACHS.iter().find(|(m, _)| *m == mach).map(|(_, n)| *n)
}

/// The `EF_AMDGPU_MACH_*` value of a processor name (for tests and tools).
pub fn mach_of(name: &str) -> Option<u32> {
    MACHS.iter().find(|(_, n)| *n == name).map(|(m, _)| *m)
}

/// A target feature's setting, as `e_flags` (v4+) or a target id records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Feature {
    /// The processor does not have the feature.
    Unsupported,
    /// The code works either way.
    Any,
    Off,
    On,
}

impl Feature {
    /// Decodes a v4 feature field (`bits` already shifted to 0..=3).
    pub fn from_v4(bits: u32) -> Feature {
        match bits & 3 {
            0 => Feature::Unsupported,
            1 => Feature::Any,
            2 => Feature::Off,
            _ => Feature::On,
        }
    }
}

/// A device's target id split up: `gfx90a:sramecc+:xnack-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetId {
    pub processor: String,
    pub xnack: Feature,
    pub sramecc: Feature,
}

impl TargetId {
    /// Parses a target id as HIP's `gcnArchName` reports it. A feature that
    /// is not named is `Any` (the device does not say).
    pub fn parse(s: &str) -> TargetId {
        let mut parts = s.trim().split(':');
        let processor = parts.next().unwrap_or("").to_string();
        let mut id = TargetId { processor, xnack: Feature::Any, sramecc: Feature::Any };
        for p in parts {
            let (name, value) = p.split_at(p.len().saturating_sub(1));
            let value = match value {
                "+" => Feature::On,
                "-" => Feature::Off,
                _ => continue,
            };
            match name {
                "xnack" => id.xnack = value,
                "sramecc" => id.sramecc = value,
                _ => {}
            }
        }
        id
    }
}

/// Checks that code built for `code_arch` with the given features runs on
/// the device target `device`. Returns a sentence saying why not.
pub fn check_compatible(code_arch: &str, xnack: Feature, sramecc: Feature, device: &TargetId) -> Result<(), String> {
    let dev = device.processor.as_str();
    let arch_ok =
        code_arch == dev || GENERIC_MEMBERS.iter().any(|(g, members)| *g == code_arch && members.contains(&dev));
    if !arch_ok {
        return Err(format!(
            "the code object is for {code_arch} but the device is {dev}; \
             rebuild for the device (`--arch {dev}`)"
        ));
    }
    for (name, code, dev_setting) in [("xnack", xnack, device.xnack), ("sramecc", sramecc, device.sramecc)] {
        let clash = matches!((code, dev_setting), (Feature::On, Feature::Off) | (Feature::Off, Feature::On));
        if clash {
            let want = if code == Feature::On { '+' } else { '-' };
            let have = if dev_setting == Feature::On { '+' } else { '-' };
            return Err(format!(
                "the code object needs {name}{want} but the device runs with {name}{have}; \
                 rebuild with the device's setting or with {name} unspecified (any)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (m, n) in MACHS {
            assert_eq!(mach_name(*m), Some(*n));
            assert_eq!(mach_of(n), Some(*m));
        }
        assert_eq!(mach_of("gfx90a"), Some(0x3f));
        assert_eq!(mach_of("gfx942"), Some(0x4c));
        assert_eq!(mach_of("gfx1100"), Some(0x41));
    }

    #[test]
    fn target_ids() {
        let t = TargetId::parse("gfx90a:sramecc+:xnack-");
        assert_eq!(t.processor, "gfx90a");
        assert_eq!(t.sramecc, Feature::On);
        assert_eq!(t.xnack, Feature::Off);
        assert!(check_compatible("gfx90a", Feature::Any, Feature::Any, &t).is_ok());
        assert!(check_compatible("gfx90a", Feature::Off, Feature::On, &t).is_ok());
        let e = check_compatible("gfx90a", Feature::On, Feature::Any, &t).unwrap_err();
        assert!(e.contains("xnack+"), "{e}");
        let e = check_compatible("gfx942", Feature::Any, Feature::Any, &t).unwrap_err();
        assert!(e.contains("gfx942") && e.contains("--arch gfx90a"), "{e}");
        let mi300 = TargetId::parse("gfx942:sramecc+:xnack-");
        assert!(check_compatible("gfx9-4-generic", Feature::Any, Feature::Any, &mi300).is_ok());
        assert!(check_compatible("gfx9-generic", Feature::Any, Feature::Any, &mi300).is_err());
    }
}
