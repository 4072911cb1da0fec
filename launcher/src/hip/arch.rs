//! The device's target id (`gfx90a:sramecc+:xnack-`, HIP's `gcnArchName`).
//!
//! No HIP call returns it alone, and `hipDeviceProp_t` changed layout in
//! ROCm 6 (`hipDeviceProp_tR0600`, with its own entry point). So: call the
//! ROCm 6 entry point if the library has it, else the ROCm 5 one, into a
//! buffer larger than either struct; read `gcnArchName` at the offset the
//! header check pins for that layout; if that is not a `gfx…` string (an
//! unexpected layout), scan the buffer for one.

use std::ffi::c_int;

use super::result;
use super::sys::*;

pub fn target_id(api: &HipApi, device: c_int) -> Option<String> {
    let mut buf: result::PropBuffer = [0; DEVICE_PROP_BUFFER];
    let offset = if let Some(r) = result::get_device_properties_r0600(api, &mut buf, device) {
        r.ok().map(|()| GCN_ARCH_NAME_OFFSET_R0600)
    } else if let Some(r) = result::get_device_properties(api, &mut buf, device) {
        r.ok().map(|()| GCN_ARCH_NAME_OFFSET_R0000)
    } else {
        None
    }?;
    from_props(&buf, offset)
}

/// `gcnArchName` at `offset`, or the first `gfx…` target id in the buffer.
pub fn from_props(buf: &[u8], offset: usize) -> Option<String> {
    buf.get(offset..).and_then(target_id_at).or_else(|| scan(buf))
}

/// A NUL-terminated target id at the start of `b`, if it is one.
fn target_id_at(b: &[u8]) -> Option<String> {
    let end = b.iter().take(256).position(|&c| c == 0)?;
    let s = std::str::from_utf8(&b[..end]).ok()?;
    let rest = s.strip_prefix("gfx")?;
    let proc_len = rest.find(':').unwrap_or(rest.len());
    let ok_proc = (3..=4).contains(&proc_len) && rest[..proc_len].chars().all(|c| c.is_ascii_hexdigit());
    let ok_chars = s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '+' | '-'));
    (ok_proc && ok_chars).then(|| s.to_string())
}

fn scan(buf: &[u8]) -> Option<String> {
    buf.windows(3).enumerate().filter(|(_, w)| *w == b"gfx").find_map(|(i, _)| {
        let preceded_ok = i == 0 || buf[i - 1] == 0;
        if preceded_ok { target_id_at(&buf[i..]) } else { None }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(offset: usize, name: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 2048];
        b[..19].copy_from_slice(b"AMD Instinct MI300X");
        b[offset..offset + name.len()].copy_from_slice(name);
        b
    }

    #[test]
    fn reads_at_the_known_offset() {
        let b = props(GCN_ARCH_NAME_OFFSET_R0600, b"gfx942:sramecc+:xnack-");
        assert_eq!(from_props(&b, GCN_ARCH_NAME_OFFSET_R0600).as_deref(), Some("gfx942:sramecc+:xnack-"));
        let b = props(GCN_ARCH_NAME_OFFSET_R0000, b"gfx90a:sramecc+:xnack-");
        assert_eq!(from_props(&b, GCN_ARCH_NAME_OFFSET_R0000).as_deref(), Some("gfx90a:sramecc+:xnack-"));
    }

    #[test]
    fn scans_when_the_layout_moved() {
        let b = props(1000, b"gfx1100");
        assert_eq!(from_props(&b, GCN_ARCH_NAME_OFFSET_R0600).as_deref(), Some("gfx1100"));
        // "gfx" inside another string is not taken.
        let mut b = props(1000, b"");
        b[100..112].copy_from_slice(b"xgfx90a-like");
        assert_eq!(from_props(&b, GCN_ARCH_NAME_OFFSET_R0600), None);
        assert_eq!(from_props(&[], 5), None);
    }
}
