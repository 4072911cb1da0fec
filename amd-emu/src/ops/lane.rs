//! (to be written)

use super::Exec;

pub fn lookup(_name: &str) -> Option<(Exec, u32)> {
    None
}

/// A `v_dual` pair (see `super::dual`).
pub fn dual(w: &mut crate::wave::Wave, i: &crate::decode::Inst) -> crate::wave::Result {
    super::unknown(w, i)
}
