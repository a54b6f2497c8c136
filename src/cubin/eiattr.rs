//! `.nv.info` attribute records (EIATTR): decoding, encoding and `cuobjdump -elf`-style printing.
//!
//! In: the raw bytes of a `.nv.info` or `.nv.info.<kernel>` section. Out: a list of
//! [`Attribute`]s, in file order. Each record is `u8 format, u8 code` followed by
//! - a `u16` value for formats NVAL (1), BVAL (2) and HVAL (3) (four bytes in all), or
//! - a `u16` length and that many payload bytes for SVAL (4).
//!
//! Invariant: `encode(&decode(b)?) == b` for every well-formed section. Records whose payload
//! does not have the shape we expect for their code are kept as [`Attribute::Other`] with their
//! bytes, so nothing is lost or reinterpreted.

use super::CubinError;

/// Record formats (`EIFMT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// No value (the `u16` slot is present and normally 0).
    Nval,
    /// Byte value in a `u16` slot.
    Bval,
    /// Half-word value.
    Hval,
    /// Sized payload.
    Sval,
}

impl Format {
    fn from_u8(b: u8) -> Option<Format> {
        Some(match b {
            1 => Format::Nval,
            2 => Format::Bval,
            3 => Format::Hval,
            4 => Format::Sval,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        match self {
            Format::Nval => 1,
            Format::Bval => 2,
            Format::Hval => 3,
            Format::Sval => 4,
        }
    }

    /// The name `cuobjdump -elf` prints.
    pub fn name(self) -> &'static str {
        match self {
            Format::Nval => "EIFMT_NVAL",
            Format::Bval => "EIFMT_BVAL",
            Format::Hval => "EIFMT_HVAL",
            Format::Sval => "EIFMT_SVAL",
        }
    }
}

/// Attribute codes that the typed variants use.
pub mod code {
    pub const MAX_THREADS: u8 = 0x05;
    pub const REQNTID: u8 = 0x10;
    pub const PARAM_CBANK: u8 = 0x0a;
    pub const FRAME_SIZE: u8 = 0x11;
    pub const MIN_STACK_SIZE: u8 = 0x12;
    pub const KPARAM_INFO: u8 = 0x17;
    pub const CBANK_PARAM_SIZE: u8 = 0x19;
    pub const MAXREG_COUNT: u8 = 0x1b;
    pub const EXIT_INSTR_OFFSETS: u8 = 0x1c;
    pub const S2RCTAID_INSTR_OFFSETS: u8 = 0x1d;
    pub const CRS_STACK_SIZE: u8 = 0x1e;
    pub const MAX_STACK_SIZE: u8 = 0x23;
    pub const INDIRECT_BRANCH_TARGETS: u8 = 0x34;
    pub const INT_WARP_WIDE_INSTR_OFFSETS: u8 = 0x31;
    pub const SW1850030_WAR: u8 = 0x2a;
    pub const REGCOUNT: u8 = 0x2f;
    pub const SW2393858_WAR: u8 = 0x30;
    pub const CUDA_API_VERSION: u8 = 0x37;
    pub const EXTERNS: u8 = 0x0f;
}

/// `EIATTR_*` names by code, as cuobjdump 11.8 knows them (its string table, in code order;
/// checked against its output for the codes ptxas writes for sm_5x).
const NAMES: [&str; 0x41] = [
    "EIATTR_ERROR",
    "EIATTR_PAD",
    "EIATTR_IMAGE_SLOT",
    "EIATTR_JUMPTABLE_RELOCS",
    "EIATTR_CTAIDZ_USED",
    "EIATTR_MAX_THREADS",
    "EIATTR_IMAGE_OFFSET",
    "EIATTR_IMAGE_SIZE",
    "EIATTR_TEXTURE_NORMALIZED",
    "EIATTR_SAMPLER_INIT",
    "EIATTR_PARAM_CBANK",
    "EIATTR_SMEM_PARAM_OFFSETS",
    "EIATTR_CBANK_PARAM_OFFSETS",
    "EIATTR_SYNC_STACK",
    "EIATTR_TEXID_SAMPID_MAP",
    "EIATTR_EXTERNS",
    "EIATTR_REQNTID",
    "EIATTR_FRAME_SIZE",
    "EIATTR_MIN_STACK_SIZE",
    "EIATTR_SAMPLER_FORCE_UNNORMALIZED",
    "EIATTR_BINDLESS_IMAGE_OFFSETS",
    "EIATTR_BINDLESS_TEXTURE_BANK",
    "EIATTR_BINDLESS_SURFACE_BANK",
    "EIATTR_KPARAM_INFO",
    "EIATTR_SMEM_PARAM_SIZE",
    "EIATTR_CBANK_PARAM_SIZE",
    "EIATTR_QUERY_NUMATTRIB",
    "EIATTR_MAXREG_COUNT",
    "EIATTR_EXIT_INSTR_OFFSETS",
    "EIATTR_S2RCTAID_INSTR_OFFSETS",
    "EIATTR_CRS_STACK_SIZE",
    "EIATTR_NEED_CNP_WRAPPER",
    "EIATTR_NEED_CNP_PATCH",
    "EIATTR_EXPLICIT_CACHING",
    "EIATTR_ISTYPEP_USED",
    "EIATTR_MAX_STACK_SIZE",
    "EIATTR_SUQ_USED",
    "EIATTR_LD_CACHEMOD_INSTR_OFFSETS",
    "EIATTR_LOAD_CACHE_REQUEST",
    "EIATTR_ATOM_SYS_INSTR_OFFSETS",
    "EIATTR_COOP_GROUP_INSTR_OFFSETS",
    "EIATTR_COOP_GROUP_MASK_REGIDS",
    "EIATTR_SW1850030_WAR",
    "EIATTR_WMMA_USED",
    "EIATTR_HAS_PRE_V10_OBJECT",
    "EIATTR_ATOMF16_EMUL_INSTR_OFFSETS",
    "EIATTR_ATOM16_EMUL_INSTR_REG_MAP",
    "EIATTR_REGCOUNT",
    "EIATTR_SW2393858_WAR",
    "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS",
    "EIATTR_SHARED_SCRATCH",
    "EIATTR_STATISTICS",
    "EIATTR_INDIRECT_BRANCH_TARGETS",
    "EIATTR_SW2861232_WAR",
    "EIATTR_SW_WAR",
    "EIATTR_CUDA_API_VERSION",
    "EIATTR_NUM_MBARRIERS",
    "EIATTR_MBARRIER_INSTR_OFFSETS",
    "EIATTR_COROUTINE_RESUME_ID_OFFSETS",
    "EIATTR_SAM_REGION_STACK_SIZE",
    "EIATTR_PER_REG_TARGET_PERF_STATS",
    "EIATTR_CTA_PER_CLUSTER",
    "EIATTR_EXPLICIT_CLUSTER",
    "EIATTR_MAX_CLUSTER_RANK",
    "EIATTR_INSTR_REG_MAP",
];

/// The `EIATTR_*` name of an attribute code, if cuobjdump 11.8 knows it.
pub fn attr_name(code: u8) -> Option<&'static str> {
    NAMES.get(code as usize).copied()
}

/// One kernel parameter as `EIATTR_KPARAM_INFO` describes it (12 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KParamInfo {
    /// First `u32` (always 0 from ptxas for sm_5x; cuobjdump prints it as `Index`).
    pub index: u32,
    /// Parameter position in the PTX signature.
    pub ordinal: u16,
    /// Byte offset from the start of the parameter area (c[0x0][0x140] on sm_5x).
    pub offset: u16,
    /// Packed flags: bits 0..7 log2 pointee alignment, 8..11 space, 12..16 cbank,
    /// bit 17 "is CBANK" clear, 18..31 size in bytes.
    pub flags: u32,
}

impl KParamInfo {
    /// ptxas's flags for an ordinary by-value parameter in constant bank 0x1f.
    pub fn plain(ordinal: u16, offset: u16, size: u32) -> KParamInfo {
        KParamInfo {
            index: 0,
            ordinal,
            offset,
            flags: (size << 18) | (0x1f << 12),
        }
    }
    pub fn size(&self) -> u32 {
        self.flags >> 18
    }
    pub fn log_align(&self) -> u32 {
        self.flags & 0xff
    }
    pub fn space(&self) -> u32 {
        (self.flags >> 8) & 0xf
    }
    pub fn cbank(&self) -> u32 {
        (self.flags >> 12) & 0x1f
    }
    /// Bit 17 clear means the parameter lives in a constant bank (cuobjdump prints `CBANK`).
    pub fn is_cbank(&self) -> bool {
        self.flags & (1 << 17) == 0
    }
}

/// One entry of `EIATTR_INDIRECT_BRANCH_TARGETS`: an indirect branch (ptxas lists its SYNC
/// and BRX instructions here) and where it may go.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BranchTargets {
    /// Byte offset of the branch in `.text.<k>`.
    pub offset: u32,
    /// 0 for a branch, 1 for a call (cuobjdump prints `(kind_call)`).
    pub kind: u32,
    pub targets: Vec<u32>,
}

/// One decoded `.nv.info` record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Attribute {
    /// `EIATTR_REGCOUNT` {function symbol, registers}.
    RegCount { sym: u32, count: u32 },
    /// `EIATTR_MAX_STACK_SIZE` {function symbol, bytes}.
    MaxStackSize { sym: u32, size: u32 },
    /// `EIATTR_MIN_STACK_SIZE` {function symbol, bytes}.
    MinStackSize { sym: u32, size: u32 },
    /// `EIATTR_FRAME_SIZE` {function symbol, bytes}.
    FrameSize { sym: u32, size: u32 },
    /// `EIATTR_CUDA_API_VERSION` (0x76 = 118 from ptxas 11.8).
    CudaApiVersion(u32),
    /// `EIATTR_SW2393858_WAR` (NVAL).
    Sw2393858War,
    /// `EIATTR_SW1850030_WAR` (NVAL).
    Sw1850030War,
    /// `EIATTR_PARAM_CBANK` {constant0 section symbol, offset, size}.
    ParamCbank { sym: u32, offset: u16, size: u16 },
    /// `EIATTR_CBANK_PARAM_SIZE` (HVAL).
    CbankParamSize(u16),
    /// `EIATTR_KPARAM_INFO`.
    KParamInfo(KParamInfo),
    /// `EIATTR_MAXREG_COUNT` (HVAL).
    MaxRegCount(u16),
    /// `EIATTR_EXIT_INSTR_OFFSETS`: byte offsets of EXIT instructions in `.text.<k>`.
    ExitInstrOffsets(Vec<u32>),
    /// `EIATTR_S2RCTAID_INSTR_OFFSETS`: byte offsets of `S2R Rx, SR_CTAID.*`.
    S2rCtaidInstrOffsets(Vec<u32>),
    /// `EIATTR_CRS_STACK_SIZE` (bytes of call/return/sync stack).
    CrsStackSize(u32),
    /// `EIATTR_INDIRECT_BRANCH_TARGETS`: entries of {u32 offset, u32 kind, u32 count, count
    /// u32 targets}.
    IndirectBranchTargets(Vec<BranchTargets>),
    /// Any other record, or a known code whose payload has an unexpected shape.
    Other {
        format: Format,
        code: u8,
        payload: Vec<u8>,
    },
}

fn u32s(payload: &[u8]) -> Option<Vec<u32>> {
    if payload.len() % 4 != 0 {
        return None;
    }
    Some(
        payload
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Parse INDIRECT_BRANCH_TARGETS entries; `None` unless the payload is exactly a list of
/// well-formed entries with kinds we know (0 or 1), so odd payloads stay raw.
fn branch_targets(payload: &[u8]) -> Option<Vec<BranchTargets>> {
    let words = u32s(payload)?;
    let mut out = Vec::new();
    let mut rest = &words[..];
    while !rest.is_empty() {
        let [offset, kind, count, tail @ ..] = rest else {
            return None;
        };
        let n = *count as usize;
        if *kind > 1 || tail.len() < n {
            return None;
        }
        out.push(BranchTargets {
            offset: *offset,
            kind: *kind,
            targets: tail[..n].to_vec(),
        });
        rest = &tail[n..];
    }
    Some(out)
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

impl Attribute {
    /// The record's attribute code.
    pub fn code(&self) -> u8 {
        match self {
            Attribute::RegCount { .. } => code::REGCOUNT,
            Attribute::MaxStackSize { .. } => code::MAX_STACK_SIZE,
            Attribute::MinStackSize { .. } => code::MIN_STACK_SIZE,
            Attribute::FrameSize { .. } => code::FRAME_SIZE,
            Attribute::CudaApiVersion(_) => code::CUDA_API_VERSION,
            Attribute::Sw2393858War => code::SW2393858_WAR,
            Attribute::Sw1850030War => code::SW1850030_WAR,
            Attribute::ParamCbank { .. } => code::PARAM_CBANK,
            Attribute::CbankParamSize(_) => code::CBANK_PARAM_SIZE,
            Attribute::KParamInfo(_) => code::KPARAM_INFO,
            Attribute::MaxRegCount(_) => code::MAXREG_COUNT,
            Attribute::ExitInstrOffsets(_) => code::EXIT_INSTR_OFFSETS,
            Attribute::S2rCtaidInstrOffsets(_) => code::S2RCTAID_INSTR_OFFSETS,
            Attribute::CrsStackSize(_) => code::CRS_STACK_SIZE,
            Attribute::IndirectBranchTargets(_) => code::INDIRECT_BRANCH_TARGETS,
            Attribute::Other { code, .. } => *code,
        }
    }

    /// The record's format.
    pub fn format(&self) -> Format {
        match self {
            Attribute::Sw2393858War | Attribute::Sw1850030War => Format::Nval,
            Attribute::CbankParamSize(_) | Attribute::MaxRegCount(_) => Format::Hval,
            Attribute::Other { format, .. } => *format,
            _ => Format::Sval,
        }
    }

    /// The `EIATTR_*` name, or `None` for a code cuobjdump does not know.
    pub fn name(&self) -> Option<&'static str> {
        attr_name(self.code())
    }

    /// Decode one record from its format, code and payload (for NVAL/BVAL/HVAL the payload
    /// is the two value bytes).
    fn decode(format: Format, code: u8, payload: &[u8]) -> Attribute {
        let typed = match (format, code, payload.len()) {
            (Format::Sval, code::REGCOUNT, 8) => Some(Attribute::RegCount {
                sym: le32(payload, 0),
                count: le32(payload, 4),
            }),
            (Format::Sval, code::MAX_STACK_SIZE, 8) => Some(Attribute::MaxStackSize {
                sym: le32(payload, 0),
                size: le32(payload, 4),
            }),
            (Format::Sval, code::MIN_STACK_SIZE, 8) => Some(Attribute::MinStackSize {
                sym: le32(payload, 0),
                size: le32(payload, 4),
            }),
            (Format::Sval, code::FRAME_SIZE, 8) => Some(Attribute::FrameSize {
                sym: le32(payload, 0),
                size: le32(payload, 4),
            }),
            (Format::Sval, code::CUDA_API_VERSION, 4) => {
                Some(Attribute::CudaApiVersion(le32(payload, 0)))
            }
            (Format::Nval, code::SW2393858_WAR, _) if payload == [0, 0] => {
                Some(Attribute::Sw2393858War)
            }
            (Format::Nval, code::SW1850030_WAR, _) if payload == [0, 0] => {
                Some(Attribute::Sw1850030War)
            }
            (Format::Sval, code::PARAM_CBANK, 8) => Some(Attribute::ParamCbank {
                sym: le32(payload, 0),
                offset: le16(payload, 4),
                size: le16(payload, 6),
            }),
            (Format::Hval, code::CBANK_PARAM_SIZE, 2) => {
                Some(Attribute::CbankParamSize(le16(payload, 0)))
            }
            (Format::Sval, code::KPARAM_INFO, 12) => Some(Attribute::KParamInfo(KParamInfo {
                index: le32(payload, 0),
                ordinal: le16(payload, 4),
                offset: le16(payload, 6),
                flags: le32(payload, 8),
            })),
            (Format::Hval, code::MAXREG_COUNT, 2) => Some(Attribute::MaxRegCount(le16(payload, 0))),
            (Format::Sval, code::EXIT_INSTR_OFFSETS, _) => {
                u32s(payload).map(Attribute::ExitInstrOffsets)
            }
            (Format::Sval, code::S2RCTAID_INSTR_OFFSETS, _) => {
                u32s(payload).map(Attribute::S2rCtaidInstrOffsets)
            }
            (Format::Sval, code::CRS_STACK_SIZE, 4) => {
                Some(Attribute::CrsStackSize(le32(payload, 0)))
            }
            (Format::Sval, code::INDIRECT_BRANCH_TARGETS, _) => {
                branch_targets(payload).map(Attribute::IndirectBranchTargets)
            }
            _ => None,
        };
        typed.unwrap_or_else(|| Attribute::Other {
            format,
            code,
            payload: payload.to_vec(),
        })
    }

    /// The record's payload bytes (the two value bytes for NVAL/BVAL/HVAL).
    pub fn payload(&self) -> Vec<u8> {
        let pair = |a: u32, b: u32| {
            let mut v = a.to_le_bytes().to_vec();
            v.extend_from_slice(&b.to_le_bytes());
            v
        };
        let words = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        match self {
            Attribute::RegCount { sym, count } => pair(*sym, *count),
            Attribute::MaxStackSize { sym, size }
            | Attribute::MinStackSize { sym, size }
            | Attribute::FrameSize { sym, size } => pair(*sym, *size),
            Attribute::CudaApiVersion(v) | Attribute::CrsStackSize(v) => v.to_le_bytes().to_vec(),
            Attribute::Sw2393858War | Attribute::Sw1850030War => vec![0, 0],
            Attribute::ParamCbank { sym, offset, size } => {
                pair(*sym, u32::from(*offset) | (u32::from(*size) << 16))
            }
            Attribute::CbankParamSize(v) | Attribute::MaxRegCount(v) => v.to_le_bytes().to_vec(),
            Attribute::KParamInfo(k) => {
                let mut v = k.index.to_le_bytes().to_vec();
                v.extend_from_slice(&k.ordinal.to_le_bytes());
                v.extend_from_slice(&k.offset.to_le_bytes());
                v.extend_from_slice(&k.flags.to_le_bytes());
                v
            }
            Attribute::ExitInstrOffsets(w) | Attribute::S2rCtaidInstrOffsets(w) => words(w),
            Attribute::IndirectBranchTargets(entries) => {
                let mut v = Vec::new();
                for e in entries {
                    v.extend_from_slice(&e.offset.to_le_bytes());
                    v.extend_from_slice(&e.kind.to_le_bytes());
                    v.extend_from_slice(&(e.targets.len() as u32).to_le_bytes());
                    v.extend(e.targets.iter().flat_map(|t| t.to_le_bytes()));
                }
                v
            }
            Attribute::Other { payload, .. } => payload.clone(),
        }
    }
}

/// Decode a whole `.nv.info*` section. Trailing zero bytes shorter than a record (alignment
/// padding) are not allowed by ptxas's own files, so any leftover is an error.
pub fn decode(section: &str, bytes: &[u8]) -> Result<Vec<Attribute>, CubinError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let bad = |why: String| CubinError::BadInfo {
            section: section.to_string(),
            offset: at,
            why,
        };
        if bytes.len() - at < 4 {
            return Err(bad(format!(
                "{} trailing bytes, shorter than a 4-byte record header",
                bytes.len() - at
            )));
        }
        let format = Format::from_u8(bytes[at])
            .ok_or_else(|| bad(format!("unknown record format {:#x}", bytes[at])))?;
        let code = bytes[at + 1];
        let half = le16(bytes, at + 2);
        if format == Format::Sval {
            let len = usize::from(half);
            let start = at + 4;
            if bytes.len() - start < len {
                return Err(bad(format!(
                    "record {:#x} claims {len} payload bytes but only {} remain",
                    code,
                    bytes.len() - start
                )));
            }
            out.push(Attribute::decode(format, code, &bytes[start..start + len]));
            at = start + len;
        } else {
            out.push(Attribute::decode(format, code, &bytes[at + 2..at + 4]));
            at += 4;
        }
    }
    Ok(out)
}

/// Encode records back into section bytes. Panics only if an SVAL payload exceeds 65535
/// bytes, which no record built by the writer can.
pub fn encode(attrs: &[Attribute]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in attrs {
        let payload = a.payload();
        out.push(a.format().code());
        out.push(a.code());
        if a.format() == Format::Sval {
            let len = u16::try_from(payload.len()).expect("EIATTR payload over 64 KiB");
            out.extend_from_slice(&len.to_le_bytes());
        }
        out.extend_from_slice(&payload);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// `.nv.info.k` as ptxas 11.8 wrote it for `k(.u64 a, .u32 b, .u64 c)` with one
    /// `%ctaid.x` read and one exit.
    const KERNEL_INFO: &str = "043704007600000001300000012a0000040a0800030000004001180003191800\
        04170c00000000000200100000f0210004170c00000000000100080000f01100\
        04170c00000000000000000000f02100031bff00041d040018000000041c040098000000";

    #[test]
    fn decodes_ptxas_kernel_info() {
        let bytes = hex(KERNEL_INFO);
        let attrs = decode(".nv.info.k", &bytes).unwrap();
        assert_eq!(
            attrs,
            vec![
                Attribute::CudaApiVersion(0x76),
                Attribute::Sw2393858War,
                Attribute::Sw1850030War,
                Attribute::ParamCbank {
                    sym: 3,
                    offset: 0x140,
                    size: 0x18
                },
                Attribute::CbankParamSize(0x18),
                Attribute::KParamInfo(KParamInfo::plain(2, 0x10, 8)),
                Attribute::KParamInfo(KParamInfo::plain(1, 0x8, 4)),
                Attribute::KParamInfo(KParamInfo::plain(0, 0, 8)),
                Attribute::MaxRegCount(0xff),
                Attribute::S2rCtaidInstrOffsets(vec![0x18]),
                Attribute::ExitInstrOffsets(vec![0x98]),
            ]
        );
        assert_eq!(encode(&attrs), bytes);
        let k = match attrs[5] {
            Attribute::KParamInfo(k) => k,
            _ => unreachable!(),
        };
        assert_eq!((k.size(), k.cbank(), k.is_cbank()), (8, 0x1f, true));
    }

    #[test]
    fn unknown_and_odd_records_stay_raw() {
        // An unknown SVAL code, an HVAL with an unknown code, and REGCOUNT with a short payload.
        let bytes = hex("04ee0300aabbcc" /* 3-byte payload */);
        let attrs = decode("x", &bytes).unwrap();
        assert_eq!(
            attrs,
            vec![Attribute::Other {
                format: Format::Sval,
                code: 0xee,
                payload: vec![0xaa, 0xbb, 0xcc]
            }]
        );
        assert_eq!(encode(&attrs), bytes);
        let bytes = hex("03ee3412");
        let attrs = decode("x", &bytes).unwrap();
        assert_eq!(
            attrs,
            vec![Attribute::Other {
                format: Format::Hval,
                code: 0xee,
                payload: vec![0x34, 0x12]
            }]
        );
        assert_eq!(attrs[0].name(), None);
        assert_eq!(encode(&attrs), bytes);
        let short_regcount = hex("042f0400aabbccdd");
        let attrs = decode("x", &short_regcount).unwrap();
        assert!(matches!(attrs[0], Attribute::Other { code: 0x2f, .. }));
        assert_eq!(attrs[0].name(), Some("EIATTR_REGCOUNT"));
        assert_eq!(encode(&attrs), short_regcount);
    }

    #[test]
    fn branch_targets_round_trip() {
        let bytes = hex("04341c00880000000000000001000000180100003001000001000000000000000000");
        let bytes = bytes[..bytes.len() - 2].to_vec(); // drop the two filler bytes
        let attrs = decode("x", &bytes).unwrap();
        assert_eq!(
            attrs,
            vec![Attribute::IndirectBranchTargets(vec![
                BranchTargets {
                    offset: 0x88,
                    kind: 0,
                    targets: vec![0x118]
                },
                BranchTargets {
                    offset: 0x130,
                    kind: 1,
                    targets: vec![]
                },
            ])]
        );
        assert_eq!(encode(&attrs), bytes);
    }

    #[test]
    fn malformed_sections_are_errors() {
        let err = decode(".nv.info.k", &hex("0437ff0076000000")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed .nv.info.k at byte 0x0: record 0x37 claims 255 payload bytes but only 4 remain"
        );
        let err = decode(".nv.info", &hex("01300000ff")).unwrap_err();
        assert!(err.to_string().contains("1 trailing bytes"), "{err}");
        let err = decode(".nv.info", &hex("09300000")).unwrap_err();
        assert!(
            err.to_string().contains("unknown record format 0x9"),
            "{err}"
        );
    }

    #[test]
    fn names_match_cuobjdump_for_codes_ptxas_writes() {
        for (code, name) in [
            (0x0a, "EIATTR_PARAM_CBANK"),
            (0x11, "EIATTR_FRAME_SIZE"),
            (0x17, "EIATTR_KPARAM_INFO"),
            (0x1e, "EIATTR_CRS_STACK_SIZE"),
            (0x28, "EIATTR_COOP_GROUP_INSTR_OFFSETS"),
            (0x2f, "EIATTR_REGCOUNT"),
            (0x31, "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS"),
            (0x34, "EIATTR_INDIRECT_BRANCH_TARGETS"),
            (0x37, "EIATTR_CUDA_API_VERSION"),
        ] {
            assert_eq!(attr_name(code), Some(name));
        }
        assert_eq!(attr_name(0x41), None);
    }
}
