//! The heap that the `leafold` binary and the compile benchmark run on: mimalloc, with freed
//! memory kept by the process instead of handed back to the OS.
//!
//! In: nothing; [`keep_freed_memory`] sets one process-wide mimalloc option. Library users
//! choose their own allocator and never call it (it only matters where mimalloc is the global
//! allocator, and it is harmless elsewhere).
//!
//! Why: a compile allocates and frees its tables kernel after kernel and file after file.
//! By default mimalloc returns ("purges") memory freed for a second to the OS
//! (`MADV_DONTNEED`), and the next kernel that needs as much faults the same pages back in,
//! zero-filled by the kernel. Over repeated passes of the corpus in one process, purging off
//! took the page faults and the system time down to a small fraction (measured with
//! `/usr/bin/time`, as for the README's compile-speed figures). A compiler's
//! process is short-lived, and its peak memory is unchanged: memory freed is reused by the
//! next allocation rather than requested again.

use std::ffi::{c_int, c_long};

/// The global allocator of the `leafold` binary and of the benchmarks.
pub type Heap = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_t` (mimalloc.h): the delay in
/// milliseconds before freed memory is purged, -1 for never. The test below checks that this
/// index still names that option (its default, 1000 ms, is read through it).
const MI_OPTION_PURGE_DELAY: c_int = 15;

extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
}

/// Never purge freed memory back to the OS (see the module essay). Call once, at start.
pub fn keep_freed_memory() {
    // Naming the allocator type keeps the mimalloc library (which defines the two functions
    // above) linked into every binary that calls this.
    let _ = std::mem::size_of::<Heap>();
    // SAFETY: mimalloc's option setter takes any option index below its `_mi_option_last`
    // and any value; it only stores the value, read when mimalloc next decides to purge.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

#[cfg(test)]
mod tests {
    use std::ffi::c_long;

    /// mimalloc's current purge delay in milliseconds (-1: never).
    fn purge_delay() -> c_long {
        // SAFETY: reads one option (see `keep_freed_memory`).
        unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) }
    }

    #[test]
    fn the_option_index_names_the_purge_delay() {
        // Option 15 must be mimalloc 3's purge delay, whose default is 1000 ms (unless the
        // environment set it); after the call it is -1 (never purge).
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            let before = purge_delay();
            assert!(
                before == 1000,
                "option {} is not mimalloc's purge delay (reads {before})",
                super::MI_OPTION_PURGE_DELAY
            );
        }
        super::keep_freed_memory();
        assert_eq!(purge_delay(), -1);
    }
}
