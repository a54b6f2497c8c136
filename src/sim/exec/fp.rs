//! The floating-point family of the simulator: FP32/FP64 arithmetic, compares and conversions
//! (through [`super::float`]), `HADD2`-style half pairs, `MUFU` and `RRO`.
//!
//! In: one decoded instruction and the executing lanes. Out: the destination registers and
//! predicates of each lane.

use super::*;

impl Sim<'_> {
    /// The fp family of [`Self::exec`]: the arms of its match for these forms. (One
    /// short arm per class: a long body means many classes, not long logic.)
    pub(super) fn exec_fp(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            FADD_R | FADD_C | FADD_I | FADD32I | FMUL_R | FMUL_C | FMUL_I | FMUL32I | FFMA_R
            | FFMA_C | FFMA_CC | FFMA_I | FSETP_R | FSETP_C | FSETP_I | FMNMX_R | FMNMX_C
            | FMNMX_I | DADD_R | DADD_C | DADD_I | DMUL_R | DMUL_C | DMUL_I | DFMA_R | DFMA_C
            | DFMA_CC | DFMA_I | DSETP_R | DSETP_C | DSETP_I | DMNMX_R | DMNMX_C | DMNMX_I
            | I2F_R | I2F_C | I2F_I | F2I_R | F2I_C | F2I_I | F2F_R | F2F_C | F2F_I | FSET_R
            | FSET_C | FSET_I | DSET_R | DSET_C | DSET_I | FCHK_R | FCHK_C | FCHK_I | FCMP_R
            | FCMP_C | FCMP_I | FCMP_CR => self.float(w, i, addr, exec)?,
            HADD2_R | HMUL2_R | HFMA2_R | HSETP2_R | HSET2_R => self.half(w, i, addr, exec)?,
            MUFU => self.mufu(w, i, addr, exec)?,
            RRO_R | RRO_C | RRO_I => self.rro(w, i, addr, exec)?,
            _ => unreachable!("{:?} is not a fp form", i.form),
        }
        Ok(())
    }
}
