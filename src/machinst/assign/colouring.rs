//! Colouring the webs ([`colour`]): in: a [`NameProg`] and its [`Webs`]; out: a base
//! register for every access, or `None` when more than `max_regs` are needed; then
//! [`improve_banks`] moves webs to registers of fewer bank conflicts. The rules are in the
//! parent module's essay.

use super::*;

#[cfg(test)]
thread_local! {
    /// Tests set this to make [`colour`] return a wrong colouring (one web moved onto an
    /// interfering web's register), which the checker must catch.
    pub(in crate::machinst) static CORRUPT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A colouring of `webs`: the base register of every access (of the `NameProg` the webs were
/// built from), and the register count
/// (highest register + 1, at least 2), or `None` if the greedy colouring does not fit below
/// `max_regs`. `precolour[name]` pins every web of a name (the names of fixed registers).
/// `hint`: how many registers the code may take without harm: the colouring then spreads
/// values over up to that many (see [`colour_spread`]), but never over so many that fewer
/// warps fit on an SM than with the fewest registers it found, and never more than
/// `spread_extra` above that fewest (`None`: no such cap; see `AllocOptions::spread_extra`).
/// Returns the registers of each access, the count taken and the fewest found.
pub(in crate::machinst) fn colour(
    webs: &Webs,
    precolour: &[Option<u8>],
    max_regs: u8,
    hint: u32,
    spread_extra: Option<u32>,
    save_cost: &[u64; 4],
) -> Option<(Vec<u8>, u32, u32)> {
    let nw = webs.name.len();
    let width = |w: usize| webs.width[w] as usize;
    let pinned = |w: usize| precolour.get(webs.name[w] as usize).copied().flatten();
    let mut by_first: Vec<usize> = (0..nw).collect();
    by_first.sort_by_key(|&w| (pinned(w).is_none(), webs.first[w]));
    let mut widest: Vec<usize> = by_first.clone();
    let by_first = &by_first;
    widest.sort_by_key(|&w| {
        (
            pinned(w).is_none(),
            std::cmp::Reverse(width(w)),
            webs.first[w],
        )
    });
    let mut best: Option<(Vec<u8>, u32)> = None;
    for order in [by_first, &widest] {
        let Some(c) = colour_in(webs, order, &pinned, max_regs) else {
            continue;
        };
        let top = value_top(webs, &c);
        if best.as_ref().map_or(true, |(_, t)| top < *t) {
            best = Some((c, top));
        }
    }
    #[allow(unused_mut)]
    let (mut c, top) = best?;
    // The same number of registers, each web taking the free register left longest ago: a
    // register rewritten soon after its last read or write ties the scheduler's hands
    // (a write waits for the reads of the previous value), packing every web into the lowest
    // free register made that the rule.
    // The spread colouring may take more registers than the least found, up to `hint` (what
    // the allocation would use otherwise), but never so many that fewer warps fit on an SM.
    // (`top` counts the webs that hold values: a call's clobbers pinned above them, up to
    // R59 for a `JCAL`, neither take registers nor lift the budget over `max_regs`)
    let fewest = top;
    let limit = same_occupancy(top)
        .min(max_regs as u32)
        .min(spread_extra.map_or(u32::MAX, |e| top.saturating_add(e)));
    let mut budget = hint.clamp(top, limit.max(top));
    #[allow(unused_mut)]
    let (mut c, top) = loop {
        if let Some(s) = colour_spread(webs, by_first, &pinned, budget, save_cost, Pick::Spread) {
            let used = value_top(webs, &s);
            break (s, used);
        }
        budget += 1;
        if budget > limit {
            // The spread fragments the registers where the packing fitted (a pair finds no
            // aligned free register): pack again, still keeping late-read registers for
            // later where another is free below the limit.
            let packed = [by_first, &widest].into_iter().find_map(|order| {
                colour_spread(webs, order, &pinned, limit, save_cost, Pick::Lowest)
            });
            break match packed {
                Some(s) => {
                    let used = value_top(webs, &s);
                    (s, used)
                }
                None => (c, top),
            };
        }
    };
    improve_banks(webs, &mut c, &pinned, top, save_cost);
    #[cfg(test)]
    if CORRUPT.with(|x| x.get()) {
        if let Some((w, n)) = (0..nw)
            .filter(|&w| pinned(w).is_none())
            .find_map(|w| webs.adj[w].first().map(|&n| (w, n as usize)))
        {
            c[w] = c[n] - c[n] % width(w) as u8;
        }
    }
    let per_acc = webs.of_acc.iter().map(|&w| c[w as usize]).collect();
    Some((per_acc, top, fewest))
}

/// The registers colouring `c` needs: the highest register a web holding a value covers + 1
/// (at least 2). A call's clobbers are left out: they are pinned to the caller-saved
/// registers up to R59 (`lower::abi::extern_call_clobbers`), and counting them made every
/// function with a call look as if it needed 60 registers, so that the spread colouring
/// (whose budget is what keeps the occupancy of the least count) spread its values up to
/// R59 (the 17-argument kernel of `tests/compile_subroutines.rs`: 56 registers where
/// ptxas takes 25).
fn value_top(webs: &Webs, c: &[u8]) -> u32 {
    (0..c.len())
        .filter(|&w| !webs.clobber_only[w])
        .map(|w| c[w] as u32 + webs.width[w] as u32)
        .max()
        .unwrap_or(0)
        .max(2)
}

/// Code allocated in class slices (`per_acc`: each access's register, every name one
/// register range): the same [`improve_banks`] over its webs, below `top` registers, names
/// pinned by `precolour` staying. A web moves only to registers no interfering web holds, so
/// the result is a colouring as [`colour`]'s are (and `check` verifies it the same way).
pub(in crate::machinst) fn improve_slice_banks(
    prog: &NameProg,
    per_acc: &mut [u8],
    precolour: &[Option<u8>],
    top: u32,
    save_cost: &[u64; 4],
) {
    let webs = Webs::build(prog);
    let mut c = vec![0u8; webs.name.len()];
    for (a, &w) in webs.of_acc.iter().enumerate() {
        c[w as usize] = per_acc[a];
    }
    let pinned = |w: usize| precolour.get(webs.name[w] as usize).copied().flatten();
    improve_banks(&webs, &mut c, &pinned, top, save_cost);
    for (a, &w) in webs.of_acc.iter().enumerate() {
        per_acc[a] = c[w as usize];
    }
}

/// After the greedy colouring (which sees only the webs coloured before each one): move each
/// web whose instructions read one bank twice to the free register below `top` where they do
/// least, when that is strictly less; then, where no free register helps, exchange its
/// register with another web's ([`exchange_banks`]); passes until neither improves (at most
/// 4). Pinned webs stay, and so do webs that share
/// a register with a copy partner or a part-copy end (moving one would bring its copy back).
/// Free means: no interfering web there (`adj`), aligned, and allowed by [`Webs::parts`].
fn improve_banks(
    webs: &Webs,
    c: &mut [u8],
    pinned: &dyn Fn(usize) -> Option<u8>,
    top: u32,
    save_cost: &[u64; 4],
) {
    let width = |w: usize| webs.width[w] as usize;
    let cost = |c: &[u8], w: usize, base: usize| -> u32 {
        let reads = bank_reads(webs, c, w);
        (base..base + width(w)).map(|r| reads[r % 4]).sum()
    };
    // Whether web `w` stays where it is: pinned, or on the register of a copy partner or a
    // part-copy end.
    let stays = |c: &[u8], w: usize| {
        pinned(w).is_some()
            || webs.partners[w].iter().any(|&p| c[p as usize] == c[w])
            || webs.parts[w]
                .iter()
                .any(|&(o, off)| i32::from(c[w]) == i32::from(c[o as usize]) + i32::from(off))
    };
    for _ in 0..4 {
        let mut changed = false;
        for w in 0..c.len() {
            if stays(c, w) || (webs.co_reads[w].is_empty() && webs.spill_reads[w] == 0) {
                continue;
            }
            let now = cost(c, w, c[w] as usize);
            if now == 0 {
                continue;
            }
            let mut busy = [0u64; 4];
            busy[0] |= 1 << 1;
            for &n in &webs.adj[w] {
                let b = c[n as usize] as usize;
                for r in b..b + width(n as usize) {
                    busy[r / 64] |= 1 << (r % 64);
                }
            }
            let wd = width(w);
            let parts_ok = |base: usize| {
                webs.parts[w].iter().all(|&(o, off)| {
                    let (b, ow) = (i32::from(c[o as usize]), width(o as usize) as i32);
                    let base = base as i32;
                    let overlap = base < b + ow && b < base + wd as i32;
                    !overlap || base == b + i32::from(off)
                })
            };
            // A register with a save cost that no web has yet would add a save.
            let paid = if save_cost.iter().any(|&m| m != 0) {
                taken_mask(webs, c)
            } else {
                [0; 4]
            };
            let new_save = |b: usize| {
                (b..b + wd).any(|r| {
                    let bit = 1 << (r % 64);
                    save_cost[r / 64] & bit != 0 && paid[r / 64] & bit == 0
                })
            };
            let best = (0..top as usize)
                .step_by(wd)
                .filter(|&b| {
                    b + wd <= top as usize
                        && (b..b + wd).all(|r| busy[r / 64] & (1 << (r % 64)) == 0)
                        && parts_ok(b)
                        && !new_save(b)
                })
                .map(|b| (cost(c, w, b), b))
                .min();
            if let Some((k, b)) = best {
                if k < now {
                    c[w] = b as u8;
                    changed = true;
                }
            }
        }
        changed |= exchange_banks(webs, c, &stays) > 0;
        if !changed {
            break;
        }
    }
}

/// Per bank, the registers of the webs that instructions read together with `w` under
/// colouring `c` (each once per such instruction; R1's bank once per spill of `w`).
fn bank_reads(webs: &Webs, c: &[u8], w: usize) -> [u32; 4] {
    let mut reads = [0u32; 4];
    reads[1] = webs.spill_reads[w];
    for &o in &webs.co_reads[w] {
        let b = c[o as usize] as usize;
        for r in b..b + webs.width[o as usize] as usize {
            reads[r % 4] += 1;
        }
    }
    reads
}

/// The exchange step of [`improve_banks`]: for each web `w` whose instructions read one bank
/// twice, the web `v` of its width in another bank such that giving `w` the register of `v`
/// and `v` that of `w` lowers the same-bank reads of the two most (when it lowers them at
/// all). Where registers are scarce, no register is free for `w` in a better bank over its
/// whole life, but some web there lives where `w`'s register is free (typically a value that
/// lives across a loop's body beside many short ones: a short one in the right bank gives
/// up its register and takes `w`'s).
///
/// Why it is safe: `w` goes only where no neighbour but `v` is, and `v` only where no
/// neighbour but `w` is; both keep their width's alignment; the set of registers taken is
/// the same (so the register count and the callee saves are too). Webs that stay (`stays`:
/// pinned, or sharing a copy partner's or part-copy end's register) are never exchanged, and
/// webs with part-copy ends are left out (their placement rule is on words).
///
/// An exchange that would write `w` or `v` into a register a store read late just before
/// (see [`colour_spread`]), where its own register had no such wait, is not made (rodinia's
/// dwt2d lifting kernels lost 1.4 % of their cycles to it, 5,200 each).
///
/// The gain is exact: the same-bank reads involving `w` or `v` are each web's cost, and the
/// reads of `w` with `v` count the same after the exchange as before. Quads are left out
/// (every quad covers all four banks). Returns how many exchanges were made.
fn exchange_banks(webs: &Webs, c: &mut [u8], stays: &dyn Fn(&[u8], usize) -> bool) -> usize {
    let nw = c.len();
    let width = |w: usize| webs.width[w] as usize;
    let cost = |c: &[u8], w: usize| -> u32 {
        let reads = bank_reads(webs, c, w);
        (c[w] as usize..c[w] as usize + width(w))
            .map(|r| reads[r % 4])
            .sum()
    };
    let movable = |c: &[u8], w: usize| width(w) < 4 && webs.parts[w].is_empty() && !stays(c, w);
    // Whether web `x` at `base` would be written soon after a store's late read of the
    // previous value there (the rule of [`colour_spread`]: the write waits on the read
    // scoreboard, which costs more than a bank conflict).
    let late_webs: Vec<usize> = (0..nw).filter(|&y| webs.late_end[y]).collect();
    let waits = |c: &[u8], x: usize, base: usize| {
        late_webs.iter().any(|&y| {
            let b = c[y] as usize;
            y != x
                && b < base + width(x)
                && base < b + width(y)
                && webs.last[y] < webs.first[x]
                && webs.first[x] < webs.last[y] + 1 + LATE_READ_WINDOW
        })
    };
    let mut made = 0;
    for w in 0..nw {
        if !movable(c, w) {
            continue;
        }
        let now = cost(c, w);
        if now == 0 {
            continue;
        }
        let wd = width(w);
        let reads = bank_reads(webs, c, w);
        // per register, how many of `w`'s neighbours cover it
        let mut held = [0u16; 256];
        held[1] = 1;
        for &n in &webs.adj[w] {
            let b = c[n as usize] as usize;
            for h in held.iter_mut().skip(b).take(width(n as usize)) {
                *h += 1;
            }
        }
        let mut best: Option<(u32, usize)> = None;
        for v in 0..nw {
            let (bw, bv) = (c[w] as usize, c[v] as usize);
            if v == w || width(v) != wd || bw % 4 == bv % 4 || !movable(c, v) {
                continue;
            }
            let adjacent = webs.adj[w].binary_search(&(v as u32)).is_ok();
            if (bv..bv + wd).any(|r| held[r] > u16::from(adjacent)) {
                continue;
            }
            let co_read = webs.co_reads[w].contains(&(v as u32));
            // `w`'s cost in `v`'s register, `v` where it is (exact unless `v` reads with `w`)
            let there: u32 = (bv..bv + wd).map(|r| reads[r % 4]).sum();
            let before = now + cost(c, v);
            if !co_read && there >= now && cost(c, v) == 0 {
                continue;
            }
            let v_fits = webs.adj[v].iter().all(|&n| {
                let n = n as usize;
                let b = c[n] as usize;
                n == w || b + width(n) <= bw || bw + wd <= b
            });
            if !v_fits {
                continue;
            }
            c.swap(w, v);
            let after = cost(c, w) + cost(c, v);
            c.swap(w, v);
            if after >= before || best.is_some_and(|(g, _)| before - after <= g) {
                continue;
            }
            let waited = (waits(c, w, bw), waits(c, v, bv));
            c.swap(w, v);
            let new_wait = (waits(c, w, bv) && !waited.0) || (waits(c, v, bw) && !waited.1);
            c.swap(w, v);
            if !new_wait {
                best = Some((before - after, v));
            }
        }
        if let Some((_, v)) = best {
            c.swap(w, v);
            made += 1;
        }
    }
    made
}

/// The most registers per thread that keep as many warps resident per SM as `regs` do, as far
/// as registers decide it (compute capability 5.x, see `crate::occupancy`: 16,384 registers
/// per sub-partition, 4 sub-partitions, whole warps, `regs * 32` rounded up to 256 per warp,
/// at most 64 warps).
fn same_occupancy(regs: u32) -> u32 {
    let warps = |r: u32| (4 * (16_384 / ((r * 32).div_ceil(256) * 256))).min(64);
    let w = warps(regs.max(1));
    let mut r = regs;
    while r < 255 && warps(r + 1) == w {
        r += 1;
    }
    r
}

/// Greedy colouring in `order` below `top` registers, each web (but for a free copy partner's
/// register) in the free aligned register whose previous webs ended earliest in the code;
/// `None` when a web finds no register.
///
/// Before the bank conflicts, a register whose previous value was last read by an instruction
/// that reads after issue ([`Webs::late_end`], a store's data or address) less than
/// [`LATE_READ_WINDOW`] accesses before the web's first is avoided: the write would wait on
/// the store's read scoreboard (up to `sm50::sched::model::READ_LATENCY`, 20 cycles), where
/// a bank conflict costs one. (A source the defining instruction itself reads at issue
/// costs nothing: its register stays a candidate.) Trade-off: the web may read a bank twice
/// more often, or, with [`Pick::Lowest`], take a higher register (up to the occupancy's
/// limit, never past it); where no other register is free the wait stays. Rodinia's dwt2d lifting
/// steps (`STS [R2+0x750], R3 ; IADD R3, -R11, R29`) waited 18 cycles three times a step.
///
/// A call's clobber-only webs ([`Webs::clobber_only`]) are given first, as every pinned web
/// is, but leave their registers' ends untouched: counted, they made R0, R3..R15 look used
/// just now at every `CAL`, so values never live across the call took R16 and up (the
/// `fact` kernel of `tests/compile_subroutines.rs`: 24 registers, ptxas 20; now 12).
fn colour_spread(
    webs: &Webs,
    order: &[usize],
    pinned: &dyn Fn(usize) -> Option<u8>,
    top: u32,
    save_cost: &[u64; 4],
    pick: Pick,
) -> Option<Vec<u8>> {
    const UNSET: u16 = u16::MAX;
    let mut c = vec![UNSET; webs.name.len()];
    // per register, the last access of the webs given it so far (0: none)
    let mut ended = [0u32; 256];
    // per register, up to which access a web written there would wait for a late read of
    // the previous value ([`Webs::late_end`]; 0: none)
    let mut late = [0u32; 256];
    let give =
        |c: &mut Vec<u16>, ended: &mut [u32; 256], late: &mut [u32; 256], w: usize, base: usize| {
            c[w] = base as u16;
            let width = webs.width[w] as usize;
            // A web of a call's clobbers holds no value: the register stays as free as
            // before the call for the webs coloured after it.
            let until = if webs.clobber_only[w] {
                0
            } else {
                webs.last[w] + 1
            };
            for e in ended.iter_mut().skip(base).take(width) {
                *e = (*e).max(until);
            }
            if webs.late_end[w] {
                for l in late.iter_mut().skip(base).take(width) {
                    *l = (*l).max(webs.last[w] + 1 + LATE_READ_WINDOW);
                }
            }
        };
    // Registers with a save cost that no web has taken yet: taking one adds a save
    // (`AllocOptions::save_cost`), so a web goes there only when nothing else is free.
    let new_saves = |ended: &[u32; 256], b: usize, width: usize| {
        (b..b + width)
            .filter(|&r| save_cost[r / 64] & (1 << (r % 64)) != 0 && ended[r] == 0)
            .count()
    };
    for &w in order {
        if let Some(p) = pinned(w) {
            give(&mut c, &mut ended, &mut late, w, p as usize);
        }
    }
    for &w in order {
        if pinned(w).is_some() {
            continue;
        }
        let width = webs.width[w] as usize;
        let busy = neighbours_busy(webs, &c, w);
        let free = |base: usize| {
            base % width == 0
                && base + width <= top as usize
                && (base..base + width).all(|r| busy[r / 64] & (1 << (r % 64)) == 0)
                && parts_allow(webs, &c, w, base)
        };
        let partner = webs.partners[w]
            .iter()
            .map(|&p| c[p as usize])
            .chain(part_bases(webs, &c, w))
            .find(|&b| b != UNSET && free(b as usize));
        // per bank, the registers of coloured webs that instructions read together with `w`
        // (R1's bank for every spill that stores `w`)
        let mut bank_reads = [0u32; 4];
        bank_reads[1] = webs.spill_reads[w];
        for &o in &webs.co_reads[w] {
            let b = c[o as usize];
            if b != UNSET {
                for r in b..b + webs.width[o as usize] as u16 {
                    bank_reads[r as usize % 4] += 1;
                }
            }
        }
        let conflicts = |b: usize| (b..b + width).map(|r| bank_reads[r % 4]).sum::<u32>();
        // a word of a wider part-copy end not coloured yet: a base that leaves that end
        // aligned, its other words free of what `w` meets (values live across the copy, as
        // far as `w` tells), so that its copy can disappear
        let misaligned = |b: usize| {
            webs.parts[w].iter().any(|&(o, off)| {
                let ob = b as i32 - i32::from(off);
                let ow = i32::from(webs.width[o as usize]);
                c[o as usize] == UNSET
                    && (ob < 0
                        || ob % ow != 0
                        || (ob..ob + ow).any(|r| {
                            let r = r as usize;
                            r < 256
                                && (r < b || r >= b + width)
                                && busy[r / 64] & (1 << (r % 64)) != 0
                        }))
            })
        };
        let base = match partner {
            Some(b) => b as usize,
            None => (0..top as usize)
                .step_by(width)
                .filter(|&b| free(b))
                .min_by_key(|&b| {
                    let saves = new_saves(&ended, b, width);
                    let ended = (b..b + width).map(|r| ended[r]).max().unwrap_or(0);
                    let waits = (b..b + width).any(|r| late[r] > webs.first[w]);
                    match pick {
                        Pick::Spread => (saves, waits, misaligned(b), conflicts(b), ended),
                        Pick::Lowest => (saves, waits, misaligned(b), 0, b as u32),
                    }
                })?,
        };
        give(&mut c, &mut ended, &mut late, w, base);
    }
    Some(c.into_iter().map(|b| b as u8).collect())
}

/// How [`colour_spread`] picks among the free registers (after the saves and the late reads).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// Fewest bank conflicts, then the one free longest.
    Spread,
    /// The lowest (the packing's rule; [`improve_banks`] sees to the banks after).
    Lowest,
}

/// How many accesses after a late read ([`colour_spread`]) its register is kept from a new
/// value: about the accesses of the instructions that issue while the read scoreboard is set
/// (20 cycles, one or two instructions a cycle of three accesses each, less the stalls).
const LATE_READ_WINDOW: u32 = 48;

/// The registers some web of colouring `c` takes, one bit per register.
fn taken_mask(webs: &Webs, c: &[u8]) -> [u64; 4] {
    let mut m = [0u64; 4];
    for (w, &b) in c.iter().enumerate() {
        for r in b as usize..b as usize + webs.width[w] as usize {
            m[r / 64] |= 1 << (r % 64);
        }
    }
    m
}

/// The registers web `w` may not take: those of its coloured neighbours (`c`, `u16::MAX` =
/// not coloured yet) and R1, the stack pointer; one bit per register.
fn neighbours_busy(webs: &Webs, c: &[u16], w: usize) -> [u64; 4] {
    let mut busy = [0u64; 4];
    busy[0] |= 1 << 1;
    for &n in &webs.adj[w] {
        let b = c[n as usize];
        if b != u16::MAX {
            for r in b as usize..b as usize + webs.width[n as usize] as usize {
                busy[r / 64] |= 1 << (r % 64);
            }
        }
    }
    busy
}

/// Whether web `w` may take `base` as far as its part-copy ends ([`Webs::parts`]) coloured
/// so far (`c`, `u16::MAX` = not coloured yet) allow: where their registers overlap, `w`'s
/// word must sit exactly on the copied word.
fn parts_allow(webs: &Webs, c: &[u16], w: usize, base: usize) -> bool {
    let width = webs.width[w] as i32;
    webs.parts[w].iter().all(|&(o, off)| {
        let b = c[o as usize];
        if b == u16::MAX {
            return true;
        }
        let (b, base) = (i32::from(b), base as i32);
        let ow = i32::from(webs.width[o as usize]);
        let overlap = base < b + ow && b < base + width;
        !overlap || base == b + i32::from(off)
    })
}

/// The bases that put web `w` on the copied word of a coloured part-copy end (a pair whose
/// word the call's pinned argument register copies: the copy then disappears). Where that
/// end is not coloured yet but another of its ends is (the two words of a texture's
/// coordinate pair, each copied in from a 32-bit value), the base that puts `w` where the
/// pair the other end implies would want it, so that both copies can disappear.
fn part_bases<'a>(webs: &'a Webs, c: &'a [u16], w: usize) -> impl Iterator<Item = u16> + 'a {
    let direct = webs.parts[w].iter().filter_map(move |&(o, off)| {
        let b = c[o as usize];
        if b == u16::MAX {
            return None;
        }
        u16::try_from(i32::from(b) + i32::from(off)).ok()
    });
    let sibling = webs.parts[w].iter().flat_map(move |&(o, off)| {
        let uncoloured = c[o as usize] == u16::MAX;
        let width = i32::from(webs.width[o as usize]);
        webs.parts[o as usize]
            .iter()
            .filter(move |&&(s, _)| uncoloured && s as usize != w && c[s as usize] != u16::MAX)
            .filter_map(move |&(s, off2)| {
                // `o` would sit at c[s] + off2; it must be aligned
                let ob = i32::from(c[s as usize]) + i32::from(off2);
                (ob >= 0 && ob % width == 0)
                    .then(|| u16::try_from(ob + i32::from(off)).ok())
                    .flatten()
            })
    });
    direct.chain(sibling)
}

/// Greedy colouring in `order` (see the module essay); `None` when a web finds no register.
fn colour_in(
    webs: &Webs,
    order: &[usize],
    pinned: &dyn Fn(usize) -> Option<u8>,
    max_regs: u8,
) -> Option<Vec<u8>> {
    const UNSET: u16 = u16::MAX;
    let mut c = vec![UNSET; webs.name.len()];
    for &w in order {
        if let Some(p) = pinned(w) {
            c[w] = p as u16;
            continue;
        }
        let width = webs.width[w] as usize;
        let busy = neighbours_busy(webs, &c, w);
        let free = |base: usize| {
            base % width == 0
                && base + width <= max_regs as usize
                && (base..base + width).all(|r| busy[r / 64] & (1 << (r % 64)) == 0)
                && parts_allow(webs, &c, w, base)
        };
        let partner = webs.partners[w]
            .iter()
            .map(|&p| c[p as usize])
            .chain(part_bases(webs, &c, w))
            .find(|&b| b != UNSET && free(b as usize));
        let base = match partner {
            Some(b) => b as usize,
            None => (0..max_regs as usize).step_by(width).find(|&b| free(b))?,
        };
        c[w] = base as u16;
    }
    Some(c.into_iter().map(|b| b as u8).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scalar webs with the given interference edges and co-reads (each pair read together
    /// by one instruction), nothing else.
    fn scalar_webs(n: usize, edges: &[(u32, u32)], reads: &[(u32, u32)]) -> Webs {
        let mut adj = vec![Vec::new(); n];
        for &(a, b) in edges {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        adj.iter_mut().for_each(|v| v.sort_unstable());
        let mut co_reads = vec![Vec::new(); n];
        for &(a, b) in reads {
            co_reads[a as usize].push(b);
            co_reads[b as usize].push(a);
        }
        Webs {
            of_acc: Vec::new(),
            name: (0..n as u16).collect(),
            width: vec![1; n],
            first: (0..n as u32).collect(),
            last: (0..n as u32).collect(),
            adj,
            partners: vec![Vec::new(); n],
            co_reads,
            spill_reads: vec![0; n],
            parts: vec![Vec::new(); n],
            late_end: vec![false; n],
            clobber_only: vec![false; n],
        }
    }

    fn conflicts(webs: &Webs, c: &[u8]) -> u32 {
        (0..c.len())
            .map(|w| bank_reads(webs, c, w)[c[w] as usize % 4])
            .sum::<u32>()
            / 2
    }

    /// A running sum (web 0) read with a factor (web 1), both in bank 0 (R4, R8), with
    /// registers so scarce that no free register helps: R0, R2, R3 and R5..R7 are held by
    /// webs 2..7, all interfering with webs 0 and 1 (but not with each other). The move
    /// step finds no register for either; an exchange (web 0 or 1 with one of 2..4) removes
    /// the conflict with the same registers taken and no interfering webs sharing one.
    #[test]
    fn exchange_removes_a_conflict_no_move_can() {
        let mut edges = vec![(0, 1)];
        for o in 2..8 {
            edges.push((0, o));
            edges.push((1, o));
        }
        let webs = scalar_webs(8, &edges, &[(0, 1)]);
        let mut c = vec![4u8, 8, 5, 6, 7, 0, 2, 3];
        assert_eq!(
            conflicts(&webs, &c),
            1,
            "the bank-blind colouring conflicts"
        );
        for w in 0..2 {
            let busy: Vec<u8> = webs.adj[w].iter().map(|&n| c[n as usize]).collect();
            let other_bank = (0..9u8)
                .filter(|&r| r != 1 && !busy.contains(&r))
                .filter(|&r| r % 4 != c[1 - w] % 4)
                .count();
            assert_eq!(other_bank, 0, "web {w} has a free register in another bank");
        }
        improve_banks(&webs, &mut c, &|_| None, 9, &[0; 4]);
        assert_eq!(conflicts(&webs, &c), 0, "{c:?}");
        let mut regs = c.clone();
        regs.sort_unstable();
        assert_eq!(
            regs,
            vec![0, 2, 3, 4, 5, 6, 7, 8],
            "the same registers taken"
        );
        for w in 0..c.len() {
            for &n in &webs.adj[w] {
                assert_ne!(c[w], c[n as usize], "webs {w} and {n} interfere");
            }
        }
    }

    /// A pinned web, or one on its copy partner's register, is never exchanged: with web 3
    /// on web 0's register (the copy between them gone) and web 1 pinned, the conflict
    /// stays.
    #[test]
    fn exchange_keeps_pinned_and_coalesced_webs() {
        let mut edges = vec![(0, 1)];
        for o in 2..8 {
            if o != 3 {
                edges.push((0, o));
            }
            edges.push((1, o));
        }
        let mut webs = scalar_webs(8, &edges, &[(0, 1)]);
        webs.partners[3].push(0);
        webs.partners[0].push(3);
        let mut c = vec![4u8, 8, 5, 4, 7, 0, 2, 3];
        improve_banks(&webs, &mut c, &|w| (w == 1).then_some(8), 9, &[0; 4]);
        assert_eq!((c[0], c[1], c[3]), (4, 8, 4), "{c:?}");
        // unpinned, web 1 moves (to R6, free of its neighbours); the copy stays gone
        let mut c = vec![4u8, 8, 5, 4, 7, 0, 2, 3];
        improve_banks(&webs, &mut c, &|_| None, 9, &[0; 4]);
        assert_eq!(c[0], c[3], "{c:?}");
    }
}
