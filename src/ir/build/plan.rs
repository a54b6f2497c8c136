//! The block plan: the pre-pass that splits a function's flattened statement list into blocks
//! (a label starts one, a branch or `ret`/`exit` ends one) and counts every block's incoming
//! edges, then the walk that fills the blocks in source order ([`FnBuilder::body`]).
//!
//! In: the flattened items of one function. Out: a [`Plan`] (the block of each label and the
//! expected predecessor counts) and the filled function. Invariant: a block is sealed exactly
//! when all its counted predecessors are filled.

use super::*;

/// One flattened statement (`calls::Expander` flattens bodies and inlines calls).
pub(super) enum Item<'a> {
    Enter,
    Exit,
    Decl(&'a ast::VarDecl),
    Label(&'a ast::Name),
    Instr(&'a Instruction),
    /// The start of an inlined callee's body.
    CallBegin(calls::CallSite<'a>),
    /// Its end: the callee's return point.
    CallEnd(calls::CallSite<'a>),
    /// In place of the body of an indirect call's candidate that is compiled as a
    /// subroutine (`calls::outlined_set`): the `CAL` of it, with the copy's parameters.
    SubCall(calls::CallSite<'a>),
    /// After a guarded call: where the skipped call joins (frame number).
    CallJoin(usize),
    /// After a candidate's copy of an indirect call (not the last): the jump past the other
    /// candidates to the [`Item::DispatchDone`] of the same key (the first copy's frame).
    DispatchSkip(usize),
    /// The end of an indirect call's dispatch.
    DispatchDone(usize),
    /// `.pragma "nounroll";`: the loop whose block holds it stays a loop (`ir::unroll`).
    NoUnroll,
}

/// How a PTX instruction ends a block.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Flow {
    /// Not a terminator.
    Straight,
    /// `bra`, `ret`, `exit`: nothing falls through.
    Stop,
    /// `@p bra`, `@p ret`: falls through when the guard fails.
    Fall,
}

pub(super) fn flow(i: &Instruction) -> Flow {
    match i.opcode {
        Opcode::Bra | Opcode::Ret | Opcode::Exit | Opcode::Brx => {
            if i.guard.is_some() {
                Flow::Fall
            } else {
                Flow::Stop
            }
        }
        _ => Flow::Straight,
    }
}

/// The block plan of a body: where blocks start, which label names which block, how many
/// edges enter each.
pub(super) struct Plan {
    /// By item index (one slot per item, and one past the last): the block that starts
    /// there. Slots, like `fall`, since `body` asks at every item.
    pub(super) starts: Vec<Option<Block>>,
    /// By inlined frame (0: the kernel) and label.
    pub(super) labels: HashMap<(usize, NameText), Block>,
    /// By item index: the block after a conditional terminator at this item.
    pub(super) fall: Vec<Option<Block>>,
}

impl<'m, 'f> FnBuilder<'m, 'f> {
    // ---- block plan -----------------------------------------------------------------------

    pub(super) fn plan(&mut self, items: &[Item<'_>]) -> Plan {
        let mut plan = Plan {
            starts: vec![None; items.len() + 2],
            labels: HashMap::default(),
            fall: vec![None; items.len()],
        };
        let mut cur = self.entry;
        let mut state = Flow::Straight;
        let mut empty = false;
        let mut targets: Vec<((usize, NameText), Span)> = Vec::new();
        // The inlined frame each item belongs to (labels are per frame).
        let mut frames: Vec<usize> = vec![0];
        // Frames with a `ret` that branches to their return point.
        let mut returning: HashSet<usize> = HashSet::default();
        for (i, item) in items.iter().enumerate() {
            if calls::final_ret(items, i) {
                // A callee's last `ret` falls through to its return point: no block needed.
                continue;
            }
            let frame = frames.last().copied().unwrap_or(0);
            let label = match item {
                Item::Label(n) => Some((frame, n.text.clone())),
                Item::CallEnd(c) => {
                    frames.pop();
                    Some((c.frame, NameText::new(calls::RET_LABEL)))
                }
                Item::CallJoin(f) => Some((*f, NameText::new(calls::JOIN_LABEL))),
                Item::DispatchDone(f) => Some((*f, NameText::new(calls::DONE_LABEL))),
                _ => None,
            };
            if let Some(key) = label {
                let unentered = matches!(item, Item::CallEnd(c) if !returning.contains(&c.frame));
                // A label may be a loop head, which the entry block cannot be; nothing
                // branches to the return point of a callee without an early `ret`.
                if state == Flow::Straight && ((empty && cur != self.entry) || unentered) {
                    plan.labels.insert(key, cur);
                } else {
                    let b = self.new_block(0);
                    self.sealed[b] = false;
                    if state == Flow::Straight {
                        self.expected[b] += 1;
                    }
                    plan.starts[i] = Some(b);
                    plan.labels.insert(key, b);
                    cur = b;
                    state = Flow::Straight;
                }
                // `CallEnd` emits the result copies: a join after it needs its own block.
                empty = !matches!(item, Item::CallEnd(_));
                continue;
            }
            match item {
                Item::DispatchSkip(f) => {
                    targets.push(((*f, NameText::new(calls::DONE_LABEL)), Span::default()));
                    state = Flow::Stop;
                    empty = false;
                }
                Item::Instr(_) | Item::CallBegin(_) | Item::SubCall(_) => {
                    if state == Flow::Stop {
                        // Code after an unconditional terminator with no label: unreachable.
                        let b = self.new_block(0);
                        self.sealed[b] = false;
                        plan.starts[i] = Some(b);
                        cur = b;
                    }
                    empty = false;
                    match item {
                        Item::Instr(ins) => {
                            state = flow(ins);
                            if ins.opcode == Opcode::Bra {
                                if let Some(Operand::Name(n)) = ins.operands.first() {
                                    targets.push(((frame, n.text.clone()), n.span));
                                }
                            }
                            if ins.opcode == Opcode::Brx {
                                let key = *ins as *const Instruction as usize;
                                for l in self.brx_targets.get(&key).into_iter().flatten() {
                                    targets.push(((frame, l.clone()), ins.span));
                                }
                            }
                            if ins.opcode == Opcode::Ret && frame != 0 {
                                // An inlined `ret` branches to the frame's return point.
                                targets.push(((frame, NameText::new(calls::RET_LABEL)), ins.span));
                                returning.insert(frame);
                            }
                        }
                        Item::CallBegin(c) => {
                            frames.push(c.frame);
                            state = Flow::Straight;
                            if c.guarded() {
                                // A guarded call branches over the copy to its join.
                                targets.push((
                                    (c.frame, NameText::new(calls::JOIN_LABEL)),
                                    c.ins.span,
                                ));
                                state = Flow::Fall;
                            }
                        }
                        _ => {}
                    }
                    if state == Flow::Fall {
                        let b = self.new_block(1);
                        self.sealed[b] = false;
                        plan.fall[i] = Some(b);
                        plan.starts[i + 1] = Some(b);
                        cur = b;
                        state = Flow::Straight;
                        empty = true;
                    }
                }
                _ => {}
            }
        }
        for (t, _) in &targets {
            if let Some(&b) = plan.labels.get(t) {
                self.expected[b] += 1;
            }
        }
        // Blocks nobody enters are sealed from the start.
        for &b in plan.starts.iter().flatten() {
            if self.expected[b] == 0 {
                self.sealed[b] = true;
            }
        }
        plan
    }

    pub(super) fn body(mut self, items: &[Item<'_>], span: Span) -> Option<Function> {
        // Room for two instructions and two values per statement (constants, address
        // arithmetic and wide operations make more than one of many), reserved once: with
        // one per statement nearly every function still doubled its instruction table at
        // the end, copying it whole (capacity only; nothing depends on it).
        self.func.insts.reserve(2 * items.len());
        self.func.values.reserve(2 * items.len());
        // Definitions: a write per statement, and reads cache what they find in every block
        // they pass through: room for four per statement (with two, growing the table
        // still cost 2.6M instructions over the corpus; capacity only).
        self.defs.reserve(4 * items.len());
        // The per-value slots likewise (they still grow past it, doubling).
        self.value_slots = 2 * items.len();
        self.param_var.resize(self.value_slots);
        self.incoming.resize(self.value_slots);
        self.func.value_names.resize(self.value_slots);
        self.entry = self.new_block(0);
        self.switch_to(self.entry);
        for ty in [Type::I8, Type::I16, Type::I32, Type::I64] {
            let v = self.ins().iconst(ty, 0);
            let i = self.inst_of(v);
            self.undef_insts.push(i);
            self.undef.insert(ty, v);
        }
        let z = self.undef[&Type::I32];
        let p = self.ins().icmp(IntCC::Ne, z, z);
        let i = self.inst_of(p);
        self.undef_insts.push(i);
        self.undef.insert(Type::Pred, p);

        let plan = self.plan(items);
        let mut open = true;
        for (i, item) in items.iter().enumerate() {
            if let Some(b) = plan.starts[i] {
                if open {
                    self.terminate_jump(b);
                }
                self.switch_to(b);
                open = true;
            }
            match item {
                Item::Enter => {
                    self.scopes.push(Scope::default());
                    self.scopes_changed();
                }
                Item::Exit => {
                    self.scopes.pop();
                    self.scopes_changed();
                }
                Item::Decl(v) => self.declare(v),
                Item::Label(_) | Item::CallJoin(_) | Item::DispatchDone(_) => {}
                Item::DispatchSkip(f) => {
                    let done = plan.labels.get(&(*f, NameText::new(calls::DONE_LABEL)));
                    if let (true, Some(&done)) = (open, done) {
                        self.terminate_jump(done);
                    }
                    open = false;
                }
                Item::NoUnroll => self.func.nounroll[self.cur] = true,
                Item::CallBegin(c) => {
                    // Always entered (the plan gives it a block), so scopes stay balanced.
                    let fall = plan.fall[i];
                    self.at(c.ins.span);
                    self.call_begin(c, &plan, fall);
                    if c.guarded() {
                        open = false;
                    }
                }
                Item::CallEnd(c) => {
                    self.at(c.ins.span);
                    self.call_end(c)
                }
                Item::SubCall(c) => {
                    if open {
                        self.at(c.ins.span);
                        let _ = self.sub_call(c);
                    }
                }
                Item::Instr(_) if calls::final_ret(items, i) => {}
                Item::Instr(ins) => {
                    if !open {
                        continue;
                    }
                    let fall = plan.fall[i];
                    // On `None` the error is already reported: keep going to find more
                    // (the kernel fails either way).
                    self.at(ins.span);
                    let _ = self.instruction(ins, &plan, fall);
                    if flow(ins) != Flow::Straight {
                        open = false;
                    }
                }
            }
        }
        if let Some(b) = plan.starts[items.len()] {
            if open {
                self.terminate_jump(b);
            }
            self.switch_to(b);
            open = true;
        }
        if open {
            // Falling off the end of a kernel returns.
            self.ins().ret();
            self.filled(&[]);
        }
        if self.m.errors.len() > self.err_start {
            return None;
        }
        if self.func.blocks.keys().any(|b| !self.sealed[b]) {
            self.error(span, "internal error: a block was never sealed");
            return None;
        }
        self.finish(span)
    }
}
