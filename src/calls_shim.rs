//! TEMPORARY SHIM for the system functions (`vprintf`, `malloc`, `free`, `__assertfail`, the
//! device-runtime entry points) until the `sysfn` branch lands `src/sysfn.rs`.
//!
//! In: the name of a bodiless `.extern .func` a kernel calls and its argument bytes (the
//! words of the argument registers R4.. in order, as the sm_50 call ABI lays the `.param`
//! arguments out: docs/calls.md). Out: the return bytes, or why the call has no model.
//!
//! The agreed interface is `sysfn::call(name, args, mem, state) -> Result<Vec<u8>, Error>`;
//! this shim has no memory or state to pass and models nothing: every call is reported as
//! not modelled, so `ir::eval` and the simulator both stop at the call with the same reason
//! instead of guessing a result. Replace the body by a call of `sysfn::call` on merge.

/// Run the system function `name` on `args`; see the module essay. Always `Err` here; the
/// message carries the argument bytes, so that the interpreter's and the simulator's reports
/// of one call are equal exactly when both passed the same arguments in the same registers.
pub fn call_system_function(name: &str, args: &[u8]) -> Result<Vec<u8>, String> {
    let hex: Vec<String> = args
        .chunks(4)
        .map(|w| {
            let mut b = [0u8; 4];
            b[..w.len()].copy_from_slice(w);
            format!("{:08x}", u32::from_le_bytes(b))
        })
        .collect();
    Err(format!(
        "the system function '{name}' is not modelled (no sysfn model yet); argument registers from R4: [{}]",
        hex.join(" ")
    ))
}

/// The argument registers of a system function under the sm_50 call ABI (docs/calls.md), as
/// ptxas 11.8 passes them: what the simulator reads at a `JCAL` (it sees only the callee's
/// name). `None`: not a system function.
pub fn arg_registers(name: &str) -> Option<&'static [u8]> {
    Some(match name {
        // (const char *format, void *args)
        "vprintf" => &[4, 5, 6, 7],
        // (size_t size), (void *ptr)
        "malloc" | "free" => &[4, 5],
        // (const char *message, const char *file, unsigned line, const char *function,
        // size_t charSize): the line in R8, R9 a hole before the 8-aligned function.
        "__assertfail" => &[4, 5, 6, 7, 8, 10, 11, 12, 13],
        _ => return None,
    })
}

/// The bytes of the argument registers R4..=R(max of `regs`), `word(r)` for each register in
/// `regs` and zero in the holes between them: what [`call_system_function`] gets.
pub fn arg_bytes(regs: &[u8], mut word: impl FnMut(u8) -> u32) -> Vec<u8> {
    let words = regs.iter().map(|&r| usize::from(r) - 3).max().unwrap_or(0);
    let mut bytes = vec![0u8; words * 4];
    for &r in regs {
        let at = (usize::from(r) - 4) * 4;
        bytes[at..at + 4].copy_from_slice(&word(r).to_le_bytes());
    }
    bytes
}
