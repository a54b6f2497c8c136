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

/// Run the system function `name` on `args`; see the module essay. Always `Err` here.
pub fn call_system_function(name: &str, args: &[u8]) -> Result<Vec<u8>, String> {
    Err(format!(
        "the system function '{name}' ({} argument bytes) is not modelled (no sysfn model yet)",
        args.len()
    ))
}
