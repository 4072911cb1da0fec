//! The architectures the emulator runs, and what differs between them.

/// An emulated AMD GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// RDNA3 (Radeon RX 7900): wave32, architected flat scratch.
    Gfx1100,
    /// CDNA3 (MI300): wave64, architected flat scratch.
    Gfx942,
    /// CDNA2 (MI200): wave64, flat scratch set up by the kernel.
    Gfx90a,
}

impl Arch {
    pub const ALL: [Arch; 3] = [Arch::Gfx1100, Arch::Gfx942, Arch::Gfx90a];

    pub fn parse(name: &str) -> Option<Arch> {
        // A target ID may carry features (`gfx90a:xnack-`).
        match name.split(':').next()? {
            "gfx1100" => Some(Arch::Gfx1100),
            "gfx942" => Some(Arch::Gfx942),
            "gfx90a" => Some(Arch::Gfx90a),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Arch::Gfx1100 => "gfx1100",
            Arch::Gfx942 => "gfx942",
            Arch::Gfx90a => "gfx90a",
        }
    }

    /// The wavefront size our code objects use (the kernel descriptor says
    /// so too: `enable_wavefront_size32`).
    pub fn wave_size(self) -> u32 {
        match self {
            Arch::Gfx1100 => 32,
            Arch::Gfx942 | Arch::Gfx90a => 64,
        }
    }

    /// gfx10+: `v_cmp` writes its SDST (not always VCC), `null` exists.
    pub fn is_rdna(self) -> bool {
        matches!(self, Arch::Gfx1100)
    }

    /// Whether the hardware sets FLAT_SCRATCH itself (gfx940+, gfx11).
    pub fn architected_flat_scratch(self) -> bool {
        !matches!(self, Arch::Gfx90a)
    }
}
