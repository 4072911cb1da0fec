//! `env::var`/`vars`/`set_var`/`remove_var` on GPUs: the launcher's
//! environment (read-only launcher memory), with the program's own changes
//! kept on the device over it, process-wide as on the host.

pub use super::common::Env;
use crate::ffi::{OsStr, OsString};
use crate::io;
use crate::sync::atomic::{AtomicBool, Ordering::Relaxed};
use crate::sync::{Mutex, PoisonError};
use crate::sys::pal::{abi, host_bytes};

/// The launcher's environment, fixed for the whole run.
fn launch_vars() -> impl Iterator<Item = (&'static [u8], &'static [u8])> {
    (0..abi::__gpu_std_envc()).filter_map(|i| {
        let var = host_bytes(abi::__gpu_std_env, i);
        // Like Unix, skip a leading '=' when looking for the separator.
        let eq = var.iter().skip(1).position(|&b| b == b'=')? + 1;
        Some((&var[..eq], &var[eq + 1..]))
    })
}

/// `set_var` (`Some`) and `remove_var` (`None`) since the launch, one entry
/// per key. Empty until a program changes its environment: reading it then
/// costs one uncontended lock.
static CHANGES: Mutex<Vec<(OsString, Option<OsString>)>> = Mutex::new(Vec::new());

/// Whether `CHANGES` ever had an entry: until then `getenv` and `env` read
/// the launcher's variables without taking its lock. A program that never
/// calls `set_var` or `remove_var` never stores it, so the link folds it to
/// `false` and leaves the lock and the changes out of every lookup (as
/// `thread::spawnhook`'s flag does; hello-threads: 4.7 KB of PTX).
///
/// Relaxed is enough: it is stored while the lock is held, so a reader that
/// sees it takes the lock after that holder released it, and one that does
/// not read the launcher's variables as before the change.
static CHANGED: AtomicBool = AtomicBool::new(false);

fn os_string(bytes: &[u8]) -> OsString {
    // SAFETY: any bytes are a valid `OsString` here (`os_str` is bytes).
    unsafe { OsString::from_encoded_bytes_unchecked(bytes.to_vec()) }
}

pub fn env() -> Env {
    let guard = CHANGED.load(Relaxed).then(|| CHANGES.lock().unwrap_or_else(PoisonError::into_inner));
    let changes: &[(OsString, Option<OsString>)] = guard.as_deref().map_or(&[], Vec::as_slice);
    let changed = |k: &[u8]| changes.iter().any(|(c, _)| c.as_encoded_bytes() == k);
    let mut vars: Vec<(OsString, OsString)> =
        launch_vars().filter(|&(k, _)| !changed(k)).map(|(k, v)| (os_string(k), os_string(v))).collect();
    vars.extend(changes.iter().filter_map(|(k, v)| Some((k.clone(), v.clone()?))));
    Env::new(vars)
}

pub fn getenv(key: &OsStr) -> Option<OsString> {
    if CHANGED.load(Relaxed) {
        let changes = CHANGES.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, v)) = changes.iter().find(|(k, _)| k.as_os_str() == key) {
            return v.clone();
        }
    }
    launch_vars().find(|&(k, _)| k == key.as_encoded_bytes()).map(|(_, v)| os_string(v))
}

fn change(key: &OsStr, value: Option<&OsStr>) {
    let mut changes = CHANGES.lock().unwrap_or_else(PoisonError::into_inner);
    changes.retain(|(k, _)| k.as_os_str() != key);
    changes.push((key.to_owned(), value.map(OsStr::to_owned)));
    CHANGED.store(true, Relaxed);
}

pub unsafe fn setenv(key: &OsStr, value: &OsStr) -> io::Result<()> {
    change(key, Some(value));
    Ok(())
}

pub unsafe fn unsetenv(key: &OsStr) -> io::Result<()> {
    change(key, None);
    Ok(())
}
