//! The simulator never panics or hangs: random programs (random words, and random valid
//! instructions of every form with random field values) either run or stop with a typed
//! error naming an address inside the code.

use leafold::ir::eval::{GlobalRegion, Launch};
use leafold::sim::{self, KernelInfo, SimError};
use leafold::sm50::{encode, Inst, FORMS};
use proptest::prelude::*;

/// A valid instruction word of form `k` with field values taken from `vals`.
fn word_of_form(k: usize, vals: &[u64]) -> Option<u64> {
    let info = &FORMS[k % FORMS.len()];
    let mut i = Inst::new(info.form);
    for (n, fi) in info.fields.iter().enumerate() {
        if matches!(fi.kind, leafold::sm50::FieldKind::Const(_)) {
            continue;
        }
        let mask = if fi.len >= 64 {
            !0
        } else {
            (1u64 << fi.len) - 1
        };
        // Fields are at most 32 bits wide, so the masked value fits a slot.
        i.f[n] = (vals[n % vals.len()] & mask) as u32;
    }
    i.is_valid().then(|| encode(&i))
}

fn launch() -> Launch {
    let mut l = Launch::new([2, 1, 1], [33, 1, 1]);
    l.params = vec![0; 16];
    l.step_limit = 5_000;
    l.dynamic_shared = 64;
    l.local_size = 16;
    l.global = vec![GlobalRegion {
        base: 0x1_0000_0000,
        bytes: vec![0; 256],
    }];
    l
}

fn check(code: &[u64]) {
    match sim::run(code, &KernelInfo::new(16), &launch()) {
        Ok(_) | Err(SimError::BadLaunch(_)) | Err(SimError::BadCubin(_)) => {}
        Err(e) => {
            let addr = match e {
                SimError::Decode { addr, .. }
                | SimError::Unsupported { addr, .. }
                | SimError::BadPc { addr, .. }
                | SimError::OutOfBounds { addr, .. }
                | SimError::Unmapped { addr, .. }
                | SimError::Misaligned { addr, .. }
                | SimError::PlgMismatch { addr, .. }
                | SimError::Divergence { addr, .. }
                | SimError::StepLimit { addr, .. }
                | SimError::Trap { addr }
                | SimError::AssertFailed { addr, .. }
                | SimError::SystemCall { addr, .. } => addr,
                SimError::BadLaunch(_) | SimError::BadCubin(_) => unreachable!(),
            };
            assert!(addr % 8 == 0, "{e}");
            assert!(e.to_string().starts_with("0x"), "{e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_bytes_are_not_a_cubin(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let r = sim::load_kernel(&bytes, "k");
        prop_assert!(matches!(r, Err(SimError::BadCubin(_))));
    }

    #[test]
    fn random_words_never_panic(words in prop::collection::vec(any::<u64>(), 1..40)) {
        check(&words);
    }

    #[test]
    fn random_valid_instructions_never_panic(
        insts in prop::collection::vec(
            (any::<usize>(), prop::collection::vec(any::<u64>(), 8)), 1..24)
    ) {
        let mut code = Vec::new();
        for (n, (k, vals)) in insts.iter().enumerate() {
            if n % 3 == 0 {
                code.push(0);
            }
            code.push(word_of_form(*k, vals).unwrap_or(0x50b0000000070f00));
        }
        check(&code);
    }
}
