//! A functional SM50 simulator: runs raw `.text` words the way the IR reference interpreter
//! ([`crate::ir::eval`]) runs IR, so the two can be compared byte for byte.
//!
//! In: the kernel's code (64-bit words, bundles of one control word plus three instructions,
//! as in a cubin's `.text.<kernel>`), a [`KernelInfo`] (parameter, shared and local sizes,
//! extra constant banks) and an [`ir::eval::Launch`](crate::ir::eval::Launch). Out: the same
//! [`RunOutput`] the interpreter produces (global regions, each CTA's shared memory, each
//! thread's local memory), or a [`SimError`] naming the instruction address at fault.
//! [`run_cubin`] takes a whole cubin instead (see [`load_kernel`]). Nothing here panics on any
//! code word, cubin or launch: every word is decoded with [`sm50::decode`], every unknown or
//! unmodelled instruction is [`SimError::Unsupported`], every memory access is bounds- and
//! alignment-checked, and a step limit stops infinite loops.
//!
//! Control words are ignored: this is a functional model, not a timing model. Every
//! instruction completes before the next one issues, so stall counts and scoreboards do not
//! matter (a kernel whose control codes are wrong still runs correctly here; that is for the
//! scheduler's own checks).
//!
//! # Machine state
//!
//! * Warps of 32 lanes. Each lane has R0..R254 (RZ = 255 reads 0, writes are dropped),
//!   predicates P0..P6 (PT = 7 is always true) and a condition-code register with CC.CF (carry)
//!   CC.OF (on LEA: "not in the shared window", see below; 0 from other writers), CC.ZF and
//!   CC.SF (result zero / negative, set by every `.CC` writer). Lanes past the CTA's thread
//!   count start exited.
//! * Threads are numbered x fastest; warp `w` holds linear threads `32w..32w+31`.
//! * CTAs run one after another (x fastest). Inside a CTA, warps run round-robin, each until it
//!   exits, reaches `BAR.SYNC` or executes a `NOP`; when every warp that has not exited is
//!   at the barrier, all continue (exited warps count as arrived, as in `ir::eval`). A `NOP`
//!   is where a spin-wait yields (leafold's emulated `mbarrier` waits, `ir::MemScope::Yield`,
//!   and `bar.warp.sync`): the warp stops for this round and the others run, so a warp that
//!   waits for a later warp makes progress, as on the hardware, which interleaves its warps.
//!   (ptxas puts `NOP`s only in the padding after the last `EXIT`.)
//! * `Launch::step_limit` counts warp-instructions here (thread instructions in `ir::eval`).
//!
//! # Textures
//!
//! `TEXS`, `TLDS`, `TXQ`, `TEX`, `TLD` and their `.B` forms read the launch's textures
//! (`Launch::textures`) through the texture model `crate::texture`, the one `ir::eval`
//! uses: a slot word the cubin relocates with `R_CUDA_TEX_HEADER_INDEX` names a `.texref`
//! ([`KernelInfo::textures`]), any other word (or a `.B` form's register) holds a texture
//! object's handle (`tex`).
//!
//! # Memory (same layout and window bases as `ir::eval`)
//!
//! * **global**: the launch's regions; an access must lie wholly inside one.
//! * **shared**: per CTA, `KernelInfo::shared_size` rounded up to 16, then
//!   `Launch::dynamic_shared` bytes.
//! * **local**: per thread, `KernelInfo::local_size + Launch::local_size` bytes. The stack
//!   pointer ptxas loads into R1 (`c[0x0][0x20]`) is the top of that memory (its size), since
//!   the prologue subtracts the frame size from it.
//! * **constant bank 0** (sm50-isa.md §4): `[0x0]` shared window base, `[0x4]` local window
//!   base, `[0x8..0x14]` %ntid, `[0x14..0x20]` %nctaid, `[0x20]` initial R1, `[0x28]` %gridid,
//!   `[0xd0..0xd8]` the 64-bit const window base (`cvta.const`), `[0xfc]` dynamic shared size, `[0x140..]` the parameter bytes. Other banks come from
//!   [`KernelInfo::banks`] (ptxas's `.nv.constant2` literals, `.nv.constant3` user data).
//! * **generic** addresses (LD/ST): the shared window `[SHARED_WINDOW_BASE, +WINDOW_SIZE)` and
//!   the local window `[LOCAL_WINDOW_BASE, +WINDOW_SIZE)` map to offsets; so does the const
//!   window `[CONST_WINDOW_BASE, +WINDOW_SIZE)`, onto bank 3 for loads only (where
//!   `generic(x)` of a `.const` variable in an initializer points; a store there is an error);
//!   anything else is global. Without `.E` the address is the 32-bit register value,
//!   zero-extended.
//!
//! Every access must be naturally aligned to its size; a misaligned one is
//! [`SimError::Misaligned`] (PTX leaves it undefined; `ir::eval` rejects it too).
//!
//! # The Plg model (an inference, not a hardware fact)
//!
//! The LEA description (seed 001) says the final address is checked against the shared window
//! and Plg is set from that; CC.OF on LEA is "!(shared-memory-window-detect)". This
//! simulator models:
//!
//! * `LEA` (the low word) with `.CC`: CC.OF = !detect(result), with
//!   `detect(lo) = (lo & 0xff000000) == c[0x0][0x0]`. CC.CF is the carry as usual.
//! * Plg is the same "not in the shared window" bit as CC.OF: `LEA` (32-bit) writing Plg:
//!   Plg = !detect(result). `LEA.HI` writing Plg: Plg = !((result == 0) && !CC.OF), i.e.
//!   false exactly when the 64-bit address `{result : lo}` lies in the shared window, the
//!   low word's detect coming from the preceding `LEA .CC` through CC.OF. `LEA.HI .CC`
//!   passes the detect on the same way (CC.OF = Plg) so U128 chains keep working.
//! * The polarity is ptxas's: for a generic `atom` it computes `LEA.HI.X P0` and branches
//!   `@!P0` to an `ATOMS` on the address masked to the window offset, `ATOM` otherwise. So a
//!   false Plg means "shared".
//! * Generic `LD`/`ST` predicate operand: true (including PT) means "decode the windows";
//!   false means "shared" (Plg's word for it). A false predicate on an address outside the
//!   shared window is reported as [`SimError::PlgMismatch`] (the miscompile it would be),
//!   never silently served.
//!
//! # Instruction semantics
//!
//! All arithmetic is 32-bit two's complement per lane. `B` is the second source (register,
//! constant `c[bank][off]`, or immediate: imm20 sign-extended, IADD3's too although nvdisasm
//! prints it unsigned (ptxas writes `0xfffe1` for -31), except BFE's imm20 (zero-extended: a
//! packed position and length), and XMAD imm16 zero-extended). Instructions
//! execute only on active lanes whose guard predicate holds.
//!
//! * `MOV`: Rd = B in the lanes whose position in their quad (lane & 3) has its bit set
//!   in the lane mask (0xf everywhere but the quad-emulated gradients); `MOV32I`: Rd = imm
//!   (its lane mask ignored; ptxas always uses 0xf).
//! * `S2R`: TID.X/Y/Z, TID (x | y << 16 | z << 26), CTAID.X/Y/Z, LANEID, EQ/LT/LE/GT/GEMASK,
//!   SMEMSZ (the CTA's shared size), VIRTID (warp index in bits 8..13, SM 0), VIRTCFG
//!   (1 SM, 64 warps), SR 0x01 (the warp-instruction count), CLOCKLO/CLOCKHI and
//!   GLOBALTIMERLO/HI (also by `CS2R`): the clock model shared with `ir::eval`
//!   (`eval::timer_value`: each lane's n-th read of a low word sees `lo(n)`, the high words
//!   are constant).
//! * `IADD`: Rd = ±Ra + ±B [+ CC.CF with .X]. A negated operand adds `~x + 1` (or `~x` with
//!   .X, where the borrow comes in through CC.CF), so CC.CF after `.CC` is the carry out of
//!   that 33-bit sum: ptxas's `ISCADD Rlo.CC, -Ri ..; IADD.X Rhi, -Rhi ..` subtracts 64 bits
//!   correctly. `.PO` (both negation bits) is Ra + B + 1. `.SAT` is not modelled.
//!   `IADD32I` likewise with a 32-bit immediate. `IADD3`: Rd = ±A + ±B + ±C (+CF with .X), the
//!   register form's .H0/.H1 halves (zero-extended) and .RS/.LS (shift A+B right/left by 16
//!   before adding C; .RS shifts the whole sum, its carry bits 32..33 included, which ptxas's
//!   mul.hi sequences rely on); CC.CF = whether the sum carries past bit 31.
//! * `ISCADD`: Rd = (±Ra << s) + ±B, carry as IADD. `ISCADD32I`: (Ra << s) + imm32.
//! * `LEA`: Rd = lo32((±Ra) << s) + B [+CF with .X]; `.CC` writes CF (carry) and OF (see Plg).
//!   `LEA.HI`: Rd = hi32((±{Rc:Ra}) << s) + B [+CF with .X], the negation being of the 64-bit
//!   value (seed 001: "{Rc,Ra} is negated"). Together, `LEA.CC` + `LEA.HI.X` add the scaled
//!   64-bit offset to a 64-bit base exactly.
//! * `SHL`: Ra << B, 0 for B >= 32 (B & 31 with .W). `SHR`: logical or (signed) arithmetic;
//!   B >= 32 gives 0 or the sign fill (B & 31 with .W). `SHF.L`/`SHF.R`: funnel shifts of
//!   {Rc:Ra}: L gives hi32({Rc:Ra} << n), R gives lo32({Rc:Ra} >> n) (hi32 with .HI; .S64 is
//!   arithmetic); n is B & 31 with .W, else clamped to 32 (32-bit type) or 64 (.U64/.S64).
//! * `LOP`: AND/OR/XOR/PASS_B of (~)Ra, (~)B; the predicate output (.T/.Z/.NZ, none = false)
//!   goes to Pdst. `LOP3`: the 8-bit LUT indexed by (a << 2 | b << 1 | c) per bit (a = 0xF0,
//!   b = 0xCC, c = 0xAA convention); LOP3's reg form also has .Z/.NZ/.T into Pdst. `LOP32I`.
//! * `XMAD`: 16×16 multiply-add. a16 = Ra's low or high (.H1) half, b16 likewise for B
//!   (imm16 has no half select), each sign-extended when its `.S16` flag is set, else
//!   zero-extended; p = a16 · b16 (32-bit), `<< 16` with .PSL. C is Rc as is, or Rc's low half
//!   (.CLO), or its high half (.CHI), or Rc + (B << 16) (.CBCC, B the whole 32-bit operand).
//!   Rd = p + C [+CF with .X], CF out with .CC. `.MRG` then replaces Rd's high half with B's low
//!   half. This makes ptxas's multiply idiom `XMAD t,a,b,RZ; XMAD.MRG u,a,b.H1,RZ;
//!   XMAD.PSL.CBCC d,a.H1,u.H1,t` compute a·b mod 2^32. `.CSFU` ("C sign fix-up") is C minus
//!   2^16 for each selected half that is signed and negative while the other operand's
//!   *other* half is non-zero: an inference, the one rule under which ptxas's mul.hi.s32
//!   sequence (`XMAD.S16.S16.CSFU w, a.H1, b.H1, RZ` feeding `IADD3.RS`) is right (see
//!   `csfu_fixup`; tests/sim_mulhi.rs checks it on edge values against `ir::eval`).
//! * `SEL`: Rd = Psel ? Ra : B. `ICMP`: Rd = (Rc cmp 0) ? Ra : B; `FCMP` likewise with a
//!   float comparison of Rc (or CR's constant) with 0.0 (`.FTZ` flushes it). `IMNMX`: min when the
//!   predicate holds, else max (signed or unsigned); the .XLO/.XMED/.XHI modes are Unsupported.
//! * `ISETP`: c = (Ra cmp B) signed or .U32; Pd0 = c BOP Pacc, Pd1 = !c BOP Pacc. With .X the
//!   comparison is the high-word step of a wide compare (ptxas: `IADD RZ.CC, lo, -lo'` then
//!   `ISET(P).X` on the high words): the sign/borrow of `Ra - B - !CF` decides LT, and EQ also
//!   needs the low words' CC.ZF. `ISET`: Rd = (c BOP Pacc) ? (1.0 with
//!   .BF, else 0xffffffff) : 0. `PSETP`: t = Pa BOP1 Pb; Pd0 = t BOP2 Pc, Pd1 = !t BOP2 Pc.
//! * `BFE`: B = pos | len << 8; the `len` bits of Ra from `pos`, sign-extended when signed
//!   (0 when len = 0; bits past 31 read as zero, or as the sign for the signed form).
//!   `BFI`: Rd = Rc with `len` bits at `pos` replaced by Ra's low bits.
//! * `POPC`: number of set bits of (~)B. `FLO`: index of the highest set bit of (~)B
//!   (signed: of B, or ~B when negative), 0xffffffff when none; .SH gives 31 - index.
//! * `VABSDIFF4`: the byte lanes |Ra.b[i] - Rb.b[i]| (Ra's bytes signed with .S8); .ACC:
//!   Rd = Rc + their sum, otherwise Rd = the lanes' low bytes (default selectors, all lanes,
//!   no .SAT: the only forms decoded, those ptxas writes for `vabsdiff4`).
//! * `VADD`, `VABSDIFF`, `VMNMX`, `VSET`, `VSHL`, `VSHR`, `VMAD`: the scalar video
//!   instructions, see [`video`] (selected, extended operands; .SAT to the destination's
//!   range; .ACC/.MIN/.MAX/merge with Rc).
//! * `IMAD.HI.SAT` (signed; the only IMAD leafold writes, for `mad.hi.sat.s32`): the high
//!   word of Ra * Rb plus Rc, clamped to the s32 range.
//! * `I2I`: B (its .B1/.B2/.B3 byte or half selected) read as the source type, converted to
//!   the destination type: truncated and re-extended, or clamped with .SAT; -B and |B| apply
//!   to the source value first.
//! * Memory: `LDG`/`STG` (global; .E = 64-bit address in Ra:Ra+1), `LD`/`ST` (generic, with
//!   the Plg predicate above), `LDS`/`STS` (shared offset Ra + off), `LDL`/`STL` (local offset
//!   Ra + off), `LDC` (c[bank][Ra + off]). Sizes U8/S8/U16/S16 (loads zero- or sign-extend
//!   into one register), 32, 64 (a register pair), 128 and U.128 (a quad). An address
//!   register of RZ is 0, so the offset is absolute. Loads to RZ read memory and drop it.
//! * `BRA`: with a CC test (`BRA CC.NEU`, which ptxas pairs with `ISET … RZ.CC`), only lanes
//!   whose CC passes branch: EQ = ZF, NE = !ZF, LT = SF ^ OF, LE, GT, GE accordingly, NUM and
//!   T true, F and NAN false, the unordered forms as the ordered ones (integer CC writers
//!   never flag unordered); the remaining tests are Unsupported. Target = address + 8 + rel (a bundle base is the bundle's first instruction). A
//!   branch taken by only some active lanes diverges: the others are pushed as a divergence
//!   entry and run when the taken lanes reach SYNC/EXIT/BRK.
//! * `SSY` pushes a reconvergence entry (target, active mask), `PBK` a break entry. `SYNC`:
//!   the executing lanes wait; when no lane is active the top entry is popped: a divergence
//!   entry resumes its lanes, a reconvergence entry resumes all its lanes at its target.
//!   `BRK`: the executing lanes leave every entry above the innermost break entry and wait for
//!   it. `EXIT`: the executing lanes leave for good. Entries whose lanes all left are skipped.
//! * `BAR.SYNC`: the warp waits for the rest of its CTA (barrier id and thread count ignored:
//!   every named barrier is the whole-CTA barrier, as in `ir::eval`; so are the register
//!   forms `BAR.SYNC Ra` / `BAR.SYNC id, Rb` / `BAR.SYNC Ra, Rb`, whose registers are not
//!   read: `ir::eval` refuses the numbers and counts PTX leaves undefined). `BAR.ARV` goes on.
//!   A warp reaching it with some live lanes missing (waiting on the divergence stack, or
//!   guarded off) is [`SimError::Divergence`]: sm_5x counts arrivals per warp, so the missing
//!   lanes would be counted as arrived while they are not (PTX: undefined for sm_6x and
//!   below). Code without `SSY`/`SYNC` around a divergent branch before a barrier fails here.
//!   `BAR.RED.POPC/AND/OR` is `BAR.SYNC` that also reduces its predicate over the arriving
//!   threads; once every warp has arrived, `B2R.RESULT Rd, Pd` reads the count (after .POPC,
//!   into Rd) or the vote (after .AND/.OR, into Pd); other B2R pairings are Unsupported.
//! * `CAL` (unguarded) pushes a call entry (the return address, the active lanes) and jumps;
//!   `RET` works like `BRK` on the innermost call entry: the returning lanes leave every entry
//!   above it and resume at the return address once all its lanes have returned or exited.
//! * `PSET`: Rd = ((Pa BOP1 Pb) BOP2 Pc) ? (1.0 with .BF, else 0xffffffff) : 0.
//!   `R2P PR, Ra.Bn, mask`: each predicate Pk (k < 7) whose mask bit k is set becomes bit k
//!   of Ra's byte n (ptxas restores spilled predicates so). `P2R Rd, PR, Ra.Bn, mask`: Ra with
//!   byte n's masked bits replaced by the predicates P0..P6 (`P2R … CC` and `R2P CC, …`, which
//!   move the condition code, are Unsupported).
//! * `NOP`, `DEPBAR`, `MEMBAR`: nothing (a functional model has no pending operations).
//!   `CCTL`/`CCTLL` (prefetch): nothing either, and no fault on any address (a cache hint).
//! * Floating point (`float.rs`): `FADD`, `FMUL`, `FFMA` (and `FADD32I`/`FMUL32I`), `FSETP`,
//!   `FSET`, `FMNMX`, `DADD`, `DMUL`, `DFMA`, `DSETP`, `DSET`, `DMNMX`, `I2F`, `F2I` and `F2F` at every size,
//!   with every rounding mode, .FTZ, .SAT and operand negation/absolute value, computed by
//!   the exact IEEE core of `ir::float` (the reference the IR interpreter uses): NaN results
//!   are canonical, `F2I` saturates (NaN gives 0), `FMNMX`/`DMNMX` give the minimum when the
//!   predicate holds (a NaN operand yields the other, -0 < +0). FMUL scaling, .FMZ and .CC
//!   are Unsupported.
//! * `VOTE.ALL/ANY/EQ` (Rd = the ballot of the executing lanes, Pd = the vote).
//!
//! * `IMUL`, `IMUL32I`: the low (or, with .HI, high) word of the 64-bit product of Ra and B,
//!   each read as signed (.S32) or unsigned; .CC is Unsupported.
//! * `PRMT`: PTX `prmt.b32{.mode} d, a, b, c` is `PRMT{.MODE} d, a, c, b`; default mode:
//!   result byte k is byte (nibble k & 7) of {Rc:Ra}, or its sign replicated when nibble bit 3
//!   is set; .F4E/.B4E/.RC8/.ECL/.ECR/.RC16: the PTX ISA's table of the four byte patterns
//!   picked by the selector's two low bits.
//! * `BPT.TRAP` (PTX `trap`): any live lane stops the launch with `SimError::Trap`; the other
//!   BPT modes are Unsupported.
//! * `SHFL.IDX/UP/DOWN/BFLY`: PTX's `shfl` rule with b = lane/offset and c = clamp | segment
//!   mask << 8; Pd = the source lane is in range (else the lane keeps its own Ra). A source
//!   lane that is not executing is read anyway (PTX: undefined).
//! * `SAM`/`RAM` (ptxas's quad-emulated `tex.grad`, `lower::select::tex::quad`): SAM saves
//!   the active mask and makes every lane of a quad with an active lane active (exited
//!   lanes too, as the quad's helpers); RAM restores the saved mask; no nesting. `FSWZADD`:
//!   lane k of each quad adds `±Ra` (or +0) and `±Rb` by op k, as FADD rounds. `TEX.NDV`:
//!   the level of detail from the differences to the lane's quad neighbours (`sim::tex`).
//! * `ATOM`/`RED` (global, `.E` 64-bit address) and `ATOMS` (shared, offset in words):
//!   ADD, MIN, MAX (.S32/.S64 signed), INC and DEC (32-bit), AND, OR, XOR, EXCH on 32- or
//!   64-bit values (register pairs), and `ATOM(S).CAS[.64]` (Rb compare, then the new value
//!   at Rb+1, or Rb+2:Rb+3). Lanes act one after another in lane order (one of the orders
//!   hardware may choose); float and 128-bit atomics are Unsupported. ATOM is not a generic
//!   access: ptxas routes shared-window addresses to ATOMS itself (see Plg above).
//! * `MUFU.RCP/RSQ/SIN/COS/LG2/EX2/RCP64H/RSQ64H` (`.SAT`, negated/absolute operand) and
//!   `RRO`: the numeric model of [`crate::mufu`] (the exact function rounded to f32, or to the
//!   high word of an f64; subnormals flushed; RRO the identity). Hardware is within ~1-2 ulp
//!   of it, so [`SimOptions::mufu_ulps`] ([`run_with`]) moves every finite non-zero MUFU
//!   result by that many ulps: IEEE-exact sequences must give the same results for any
//!   small perturbation.
//!
//! [`run_traced`] also returns a [`WriteLog`]: the `.text` offset of the store or atomic that
//! last wrote each byte, which `leafold verify` prints for the first differing byte.
//!
//! Not modelled (Unsupported with the address): other IMAD forms (recognised by opcode, since
//! the instruction set description had no form for it when the simulator was written),
//! a JCAL other than a call of a system function ([`KernelInfo::calls`], which runs
//! the function's model [`crate::sysfn`] through `syscall`), and the modifiers listed above.
//! (`BRX Ra` jumps to `Ra` plus its relative offset, lanes with different targets diverging
//! as for `BRA`; `PRET` pushes a call entry without jumping: ptxas's jump tables and
//! indirect calls, `exec/ctrl.rs`.)

mod cubin;
mod exec;
mod float;
mod half;
mod mem;
mod mufu;
mod syscall;
mod tex;
mod trace;
mod video;

use crate::ir::eval::{Launch, RunOutput};
use crate::sm50;

pub use cubin::{global_symbols, load_kernel, load_kernel_globals};
pub use mem::{CONST_BANK0_SIZE, PARAM_BASE};
pub use mufu::SimOptions;
pub use trace::{Dependences, Loc, WriteLog, MAX_TRACE};

/// What the simulator needs to know about a kernel besides its code.
#[derive(Clone, Debug, Default)]
pub struct KernelInfo {
    /// Bytes of parameters (the `c[0x0][0x140..]` area); `Launch::params` must hold at least
    /// this many.
    pub param_size: u32,
    /// Static shared memory per CTA (`.nv.shared.<kernel>`); dynamic shared memory follows it
    /// at a 16-byte boundary.
    pub shared_size: u32,
    /// Local memory (stack frame) per thread; `c[0x0][0x20]` points at its top.
    pub local_size: u32,
    /// Constant banks other than 0, as (bank, bytes).
    pub banks: Vec<(u8, Vec<u8>)>,
    /// The bound textures' words of constant bank 0 (the cubin's `R_CUDA_TEX_HEADER_INDEX`
    /// relocations): (byte offset, `.texref` name). A texture instruction whose slot is
    /// one of these reads `Launch::textures` by that name; any other slot word holds a
    /// texture object's handle (a `.u64` parameter's low word).
    pub textures: Vec<(u32, String)>,
    /// The words of [`textures`](Self::textures) that are a (texture, sampler) pair of
    /// `.texmode_independent` (also relocated with `R_CUDA_SAMP_HEADER_INDEX`), as (byte
    /// offset, the sampler's `EIATTR_SAMPLER_INIT` state, [`crate::sampler`]): a fetch
    /// through one reads the texture with the sampler's modes.
    pub samplers: Vec<(u32, crate::sampler::SamplerInit)>,
    /// Words of bank 0 that hold a `.surfref`'s handle (`R_CUDA_SURF_HEADER_INDEX`), as
    /// (byte offset, surfref name): the launch fills in the index of the surface of that
    /// name ([`crate::surface`]).
    pub surface_slots: Vec<(u32, String)>,
    /// The `JCAL`s to system functions: (`.text` offset, callee name), from the code's
    /// `R_CUDA_ABS32_20` relocations against undefined symbols.
    pub calls: Vec<(u64, String)>,
    /// The code reads the driver's texture descriptor table (`crate::tex_table`): the launch
    /// places it and points `c[0x0][0xb0]` at it.
    pub texture_table: bool,
    /// The code reads the driver's surface descriptor table (`crate::tex_table::surf`,
    /// `suq`): the launch places it after the texture table and points `c[0x0][0xc0]` at it.
    pub surface_table: bool,
    /// The code reads the driver's sampler descriptor table (`crate::tex_table::samp`,
    /// `txq` of a sampler attribute): the launch places it and points `c[0x0][0xb8]` at it.
    pub sampler_table: bool,
    /// The cubin is a 32-bit module's (`.address_size 32`, no `EF_CUDA_64BIT_ADDRESS`):
    /// system calls read and return 4-byte pointers ([`crate::sysfn::State::pointer_bytes`]).
    pub addr32: bool,
}

impl KernelInfo {
    pub fn new(param_size: u32) -> KernelInfo {
        KernelInfo {
            param_size,
            ..KernelInfo::default()
        }
    }
}

/// Why a simulation stopped. `addr` is always the byte offset of the instruction in `.text`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error("bad launch: {0}")]
    BadLaunch(String),
    #[error("bad cubin: {0}")]
    BadCubin(String),
    #[error("0x{addr:04x}: word {word:#018x} does not decode")]
    Decode { addr: u64, word: u64 },
    #[error("0x{addr:04x}: {what} is not supported by the simulator")]
    Unsupported { addr: u64, what: String },
    #[error("0x{addr:04x}: execution left the code (no instruction at 0x{target:x})")]
    BadPc { addr: u64, target: u64 },
    #[error("0x{addr:04x}: {size}-byte {space} access at 0x{at:x} is out of bounds")]
    OutOfBounds {
        addr: u64,
        space: &'static str,
        at: u64,
        size: u32,
    },
    #[error("0x{addr:04x}: {size}-byte access at global address 0x{at:x} is not mapped")]
    Unmapped { addr: u64, at: u64, size: u32 },
    #[error("0x{addr:04x}: {size}-byte {space} access at 0x{at:x} is misaligned")]
    Misaligned {
        addr: u64,
        space: &'static str,
        at: u64,
        size: u32,
    },
    #[error(
        "0x{addr:04x}: generic access at 0x{at:x} is outside the shared window but its \
         predicate says it is shared (a wrong Plg)"
    )]
    PlgMismatch { addr: u64, at: u64 },
    #[error("0x{addr:04x}: {what}")]
    Divergence { addr: u64, what: String },
    #[error("0x{addr:04x}: step limit of {limit} warp-instructions reached")]
    StepLimit { addr: u64, limit: u64 },
    /// A warp executed `BPT.TRAP` (PTX `trap`): the launch is aborted and the host sees an
    /// error, so no memory is defined afterwards.
    #[error("0x{addr:04x}: the kernel trapped (BPT.TRAP)")]
    Trap { addr: u64 },
    /// A lane called `__assertfail` (a failed `assert`): the launch traps with CUDA's
    /// message ([`crate::sysfn`]).
    #[error("0x{addr:04x}: the kernel trapped: {message}")]
    AssertFailed { addr: u64, message: String },
    /// A system call without a defined meaning (a bad pointer, a double free).
    #[error("0x{addr:04x}: {what}")]
    SystemCall { addr: u64, what: String },
}

/// The decoded program: one entry per instruction slot, addressed by byte offset.
pub(crate) struct Program {
    /// Indexed by `addr / 8`; control-word positions hold `None` (never executed).
    slots: Vec<Option<Result<sm50::Inst, u64>>>,
    /// The control field of each instruction slot, indexed as `slots` (for `run_timed`).
    ctrl: Vec<sm50::Ctrl>,
}

impl Program {
    fn new(code: &[u64]) -> Program {
        let mut slots = Vec::with_capacity(code.len());
        let mut ctrl = vec![sm50::Ctrl::NEUTRAL; code.len()];
        for (i, &w) in code.iter().enumerate() {
            if i % 4 == 0 {
                for k in 1..4 {
                    if let Some(c) = ctrl.get_mut(i + k) {
                        *c = sm50::Ctrl::from_bits((w >> (21 * (k - 1))) as u32 & 0x1f_ffff);
                    }
                }
                slots.push(None);
            } else {
                slots.push(Some(sm50::decode(w).map_err(|_| w)));
            }
        }
        Program { slots, ctrl }
    }

    /// The control field of the instruction at `addr`.
    fn ctrl(&self, addr: u64) -> &sm50::Ctrl {
        self.ctrl
            .get((addr / 8) as usize)
            .unwrap_or(&sm50::Ctrl::NEUTRAL)
    }

    /// The instruction at `addr` (an instruction slot, not a control word).
    fn get(&self, addr: u64, from: u64) -> Result<&sm50::Inst, SimError> {
        let bad = SimError::BadPc {
            addr: from,
            target: addr,
        };
        if addr % 8 != 0 {
            return Err(bad);
        }
        match self.slots.get((addr / 8) as usize) {
            Some(Some(Ok(i))) => Ok(i),
            Some(Some(Err(w))) => Err(match missing_form(*w) {
                Some(name) => SimError::Unsupported {
                    addr,
                    what: format!(
                        "{name} (word {w:#018x}; the instruction set description has no form \
                         for it yet)"
                    ),
                },
                None => SimError::Decode { addr, word: *w },
            }),
            _ => Err(bad),
        }
    }
}

/// Instructions ptxas emits that `isa/sm50.isa` does not describe yet, recognised by their
/// opcode bits (48..63, value and mask) so the error can name them: IMAD, from envytools'
/// `gm107.c` (not verified here; it only names an error). PRMT, IMUL, SHFL and the atomics
/// have decoder forms now and are handled (or refused by name) in `exec`.
fn missing_form(w: u64) -> Option<&'static str> {
    const TABLE: &[(u16, u16, &str)] = &[
        (0x5a00, 0xff80, "IMAD"),
        (0x4a00, 0xff80, "IMAD"),
        (0x5200, 0xff80, "IMAD"),
        (0x3400, 0xfe80, "IMAD"),
    ];
    let top = (w >> 48) as u16;
    TABLE
        .iter()
        .find(|(v, m, _)| top & m == *v)
        .map(|(_, _, n)| *n)
}

/// The address after the instruction at `addr` (skipping the next bundle's control word).
pub(crate) fn next_addr(addr: u64) -> u64 {
    let n = addr + 8;
    if n % 32 == 0 {
        n + 8
    } else {
        n
    }
}

/// Where a branch lands: a bundle base means the bundle's first instruction (sm50-isa.md §2:
/// ptxas encodes slot-0 targets as the control word's address).
pub(crate) fn branch_target(addr: u64, rel: u64) -> u64 {
    let rel = sm50::rt::sext(rel, 24);
    let t = addr.wrapping_add(8).wrapping_add(rel);
    if t % 32 == 0 {
        t + 8
    } else {
        t
    }
}

/// Run a kernel: `code` is the raw `.text.<kernel>` section as 64-bit words.
pub fn run(code: &[u64], info: &KernelInfo, launch: &Launch) -> Result<RunOutput, SimError> {
    run_with(code, info, launch, &SimOptions::default())
}

/// [`run`] with [`SimOptions`] (e.g. perturbed `MUFU` results).
pub fn run_with(
    code: &[u64],
    info: &KernelInfo,
    launch: &Launch,
    opts: &SimOptions,
) -> Result<RunOutput, SimError> {
    exec::run(&Program::new(code), info, launch, opts).map(|(out, _)| out)
}

/// Run kernel `name` of a cubin (see [`load_kernel`] for what is read from it).
///
/// The module's `.global` data is placed where the IR interpreter puts it,
/// [`crate::ir::eval::MODULE_GLOBAL_BASE`] (`MODULE_GLOBAL_BASE_32` for a 32-bit cubin), and
/// its region comes last in the output, as there.
pub fn run_cubin(cubin: &[u8], name: &str, launch: &Launch) -> Result<RunOutput, SimError> {
    let wide = crate::cubin::read(cubin).map_or(true, |c| c.header.is_64bit());
    let base = if wide {
        crate::ir::eval::MODULE_GLOBAL_BASE
    } else {
        crate::ir::eval::MODULE_GLOBAL_BASE_32
    };
    let (code, info, region) = load_kernel_globals(cubin, name, base)?;
    match region {
        None => run(&code, &info, launch),
        Some(r) => {
            let mut l = launch.clone();
            l.global.push(r);
            run(&code, &info, &l)
        }
    }
}

/// Like [`run`], also returning how many warp-instructions were executed (for speed
/// measurements).
pub fn run_counted(
    code: &[u64],
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, u64), SimError> {
    exec::run(&Program::new(code), info, launch, &SimOptions::default())
}

/// What a run cost under the issue model of [`crate::sm50::sched::cost`], applied to the
/// instructions each warp executed ([`run_timed`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// Warp-instructions executed (an instruction counts once per warp that issued it,
    /// whatever its guard: a predicated-off instruction still takes its issue slot).
    pub warp_insts: u64,
    /// Issue cycles summed over warps: each warp's clock runs from 0 to its last
    /// instruction's issue plus stall, waiting on scoreboards as the model says; at a
    /// `BAR.SYNC` every waiting warp's clock moves to the latest arrival. Warps are timed
    /// alone (no contention for issue slots between them), so the figure compares two
    /// schedules of the same work; it does not predict a run time.
    pub issue_cycles: u64,
}

/// Where one instruction's share of a timed run's cycles went ([`run_profiled`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstCost {
    /// Warp-instructions: how many times a warp issued it.
    pub count: u64,
    /// Cycles its warps waited before issuing it, beyond the previous instruction's stall
    /// (scoreboard waits and `DEPBAR`).
    pub waited: u64,
    /// Its stall counts, summed over its issues.
    pub stalled: u64,
}

/// Per instruction byte address in the kernel's `.text`, its [`InstCost`]. Over a run,
/// the `waited + stalled` of all instructions is the run's `issue_cycles` less the time
/// warps spent at `BAR.SYNC` waiting for the others.
pub type Profile = std::collections::BTreeMap<u64, InstCost>;

/// Like [`run_timed`], also attributing the cycles to the instructions ([`Profile`]): the
/// figures behind `leafold compare --profile`.
pub fn run_profiled(
    code: &[u64],
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, Timing, Profile), SimError> {
    exec::run_profiled(&Program::new(code), info, launch)
}

/// Like [`run`], also timing the run ([`Timing`]).
pub fn run_timed(
    code: &[u64],
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, Timing), SimError> {
    exec::run_timed(&Program::new(code), info, launch)
}

/// Like [`run`], also recording which instruction last wrote each byte (slower: for
/// explaining a mismatch, see [`WriteLog`]).
pub fn run_traced(
    code: &[u64],
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, WriteLog), SimError> {
    let (out, _, log) = exec::run_logged(
        &Program::new(code),
        info,
        launch,
        &SimOptions::default(),
        Some(WriteLog::default()),
    )?;
    Ok((out, log.unwrap_or_default()))
}

/// Like [`run`], also tracing, for every instruction each lane runs, which dynamic
/// instructions wrote what it read ([`Dependences`]; slow: for checking the static address
/// slice against runs).
pub fn run_dependences(
    code: &[u64],
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, Dependences), SimError> {
    exec::run_dependences(&Program::new(code), info, launch)
}

/// Words of a `.text` section given as little-endian bytes (a trailing partial word is an
/// error).
pub fn words(text: &[u8]) -> Result<Vec<u64>, SimError> {
    if text.len() % 8 != 0 {
        return Err(SimError::BadLaunch(format!(
            ".text is {} bytes, not a multiple of 8",
            text.len()
        )));
    }
    Ok(text
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}
