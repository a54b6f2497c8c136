//! An independent hazard checker for control codes, used by tests and `--verify`-style checks.
//!
//! In: instructions in layout order, their control fields and branch targets. Out: a list of
//! violations (empty = no hazard found). It does not share state-tracking code with
//! [`super::assign_control`]: it looks, for every operand of every instruction, backwards for
//! the producer along the straight-line path and checks the obligations directly:
//!
//! * fixed-latency producer → reader: issue cycles apart ≥ 6 (GPR, carry) or 13 (predicate);
//! * variable-latency producer → reader or overwriter: some instruction after the producer, up
//!   to and including the consumer, waits on the producer's write scoreboard, at least 2 cycles
//!   after the producer issued;
//! * variable-latency reader → later overwriter of a source (not also one of its results): the
//!   reader has a read scoreboard and something up to the overwriter waits on it;
//! * at block boundaries: every leader waits on every scoreboard the function uses (an
//!   operand-free jump need not: its target waits), and the
//!   last instruction before a leader (or a control transfer) stalls until every fixed-latency
//!   result issued before it is ready;
//! * every control field passes [`crate::sm50::Ctrl::validate`].

use super::{access, bare_transfer, fixed_latency, is_control, leaders, Access, LAT_BARRIER};
use crate::sm50::{self, Bundle, Ctrl, DecodeError, Field, Form, Inst};

/// Instructions, their control fields and branch targets (instruction indices), as
/// [`check_hazards`] takes them.
pub type DecodedText = (Vec<Inst>, Vec<Ctrl>, Vec<Option<usize>>);

/// Decode a kernel's `.text` words (bundles of a control word and three instructions) into
/// instructions, their control fields and their branch targets (instruction indices), and
/// drop the NOP padding after the last instruction. A BRA/SSY/PBK target in slot 0 may be
/// encoded as its bundle's base (ptxas's habit); both spellings give the same index.
pub fn decode_text(code: &[u64]) -> Result<DecodedText, DecodeError> {
    let mut insts = Vec::new();
    let mut ctrl = Vec::new();
    for b in code.chunks(4) {
        let c = Bundle::split_ctrl(b[0]);
        for (k, &word) in b.iter().skip(1).enumerate() {
            insts.push(sm50::decode(word)?);
            ctrl.push(c[k]);
        }
    }
    let mut targets = vec![None; insts.len()];
    for (n, i) in insts.iter().enumerate() {
        if matches!(i.form, Form::BRA | Form::SSY | Form::PBK) {
            let Some(rel) = i.get(Field::Rel) else {
                continue;
            };
            let addr = (n / 3 * 32 + 8 + n % 3 * 8) as u64;
            let mut t = addr.wrapping_add(8).wrapping_add(sm50::rt::sext(rel, 24));
            if t % 32 == 0 {
                t += 8;
            }
            let index = (t / 32).checked_mul(3).zip((t % 32).checked_sub(8));
            targets[n] = index.map(|(b, s)| (b + s / 8) as usize);
        }
    }
    let live = insts.len()
        - insts
            .iter()
            .rev()
            .take_while(|i| i.form == Form::NOP)
            .count();
    insts.truncate(live);
    ctrl.truncate(live);
    targets.truncate(live);
    Ok((insts, ctrl, targets))
}

/// [`check_hazards`] over a kernel's `.text` words; a word that does not decode is reported
/// as a violation too.
pub fn check_code(code: &[u64]) -> Vec<String> {
    match decode_text(code) {
        Ok((insts, ctrl, targets)) => check_hazards(&insts, &ctrl, &targets),
        Err(e) => vec![e.to_string()],
    }
}

/// Check `ctrl` for `insts`; returns one message per violation.
pub fn check_hazards(insts: &[Inst], ctrl: &[Ctrl], targets: &[Option<usize>]) -> Vec<String> {
    let mut errs = Vec::new();
    let n = insts.len().min(ctrl.len());
    let lead = leaders(&insts[..n], targets);
    let acc: Vec<Access> = insts[..n].iter().map(access).collect();
    // Issue cycles along the layout order.
    let mut t = vec![0u32; n];
    for k in 1..n {
        t[k] = t[k - 1] + u32::from(ctrl[k - 1].stall);
    }
    let used = ctrl[..n].iter().fold(0u8, |m, c| {
        m | c.wbar.map_or(0, |b| 1 << b) | c.rbar.map_or(0, |b| 1 << b)
    });

    for k in 0..n {
        if let Err(e) = ctrl[k].validate(insts[k].info().variable_latency) {
            errs.push(format!("{k}: illegal control field: {e}"));
        }
        if lead[k]
            && (k > 0 || targets.contains(&Some(0)))
            && !bare_transfer(&insts[k], &acc[k])
            && ctrl[k].wait & used != used
        {
            errs.push(format!(
                "{k}: block leader waits on {:#x}, not every used scoreboard {used:#x}",
                ctrl[k].wait
            ));
        }
        // Some instruction in (p, k] waits on scoreboard b, 2+ cycles after p issued.
        let waited = |p: usize, b: u8| {
            (p + 1..=k).any(|j| ctrl[j].wait & (1 << b) != 0 && t[j] >= t[p] + LAT_BARRIER)
        };
        // Reads and overwrites of earlier results (RAW, WAW).
        let touched: Vec<(usize, bool)> = acc[k]
            .uses
            .iter()
            .map(|&r| (r, false))
            .chain(acc[k].defs.iter().map(|&r| (r, true)))
            .collect();
        for (r, is_def) in touched {
            let Some(p) = (0..k)
                .rev()
                .take_while(|&p| !lead[p + 1])
                .find(|&p| acc[p].defs.contains(&r))
            else {
                continue;
            };
            if insts[p].info().variable_latency {
                match ctrl[p].wbar {
                    Some(b) if waited(p, b) => {}
                    Some(b) => errs.push(format!(
                        "{k}: reads/writes resource {r} from {p} without waiting on SB{b}"
                    )),
                    None => errs.push(format!(
                        "{k}: resource {r} from variable-latency {p} has no write scoreboard"
                    )),
                }
            } else if !is_def && t[k] < t[p] + fixed_latency(r) {
                errs.push(format!(
                    "{k}: reads resource {r} {} cycles after {p} wrote it (needs {})",
                    t[k] - t[p],
                    fixed_latency(r)
                ));
            }
        }
        // Overwrites of sources still to be read by variable-latency instructions (WAR).
        for &r in &acc[k].defs {
            for p in (0..k).rev().take_while(|&p| !lead[p + 1]) {
                if !insts[p].info().variable_latency
                    || !acc[p].late_uses.contains(&r)
                    || acc[p].defs.contains(&r)
                {
                    continue;
                }
                match ctrl[p].rbar {
                    Some(b) if waited(p, b) => {}
                    _ => errs.push(format!(
                        "{k}: overwrites resource {r}, a source of {p}, before it is read"
                    )),
                }
            }
        }
        // Block ends: every fixed-latency result ready before the next block starts.
        let ends = is_control(&insts[k]) || (k + 1 < n && lead[k + 1]);
        if ends {
            let next = t[k] + u32::from(ctrl[k].stall);
            for p in (0..=k).rev() {
                if !insts[p].info().variable_latency {
                    for &r in &acc[p].defs {
                        if t[p] + fixed_latency(r) > next {
                            errs.push(format!(
                                "{k}: block ends before resource {r} from {p} is ready"
                            ));
                        }
                    }
                }
                if lead[p] {
                    break;
                }
            }
        }
    }
    errs
}
