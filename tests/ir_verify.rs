//! Verifier negative tests: one malformed function per error kind, with the exact message.

use cranelift_entity::EntityRef;
use leafold::ir::{
    verify, verify_module, Block, Function, FunctionBuilder, GlobalVar, Module, Space, Type, Value,
    VerifierError,
};

/// The messages of all errors, or an empty list if the function verifies.
fn messages(func: &Function) -> Vec<String> {
    match verify(func) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.to_string()).collect(),
    }
}

/// A function with an entry block that `body` fills (it must add its own terminator).
fn build(body: impl FnOnce(&mut FunctionBuilder)) -> Function {
    let mut func = Function::new("f");
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    body(&mut b);
    func
}

#[test]
fn a_well_formed_function_verifies() {
    let f = build(|b| {
        let x = b.iconst(Type::I32, 1);
        let y = b.add(x, x);
        let next = b.create_block();
        let p = b.append_block_param(next, Type::I32);
        b.jump(next, &[y]);
        b.switch_to_block(next);
        let c = b.iconst(Type::I32, 3);
        b.shl(p, c);
        b.ret();
    });
    assert_eq!(messages(&f), Vec::<String>::new());
}

#[test]
fn no_blocks() {
    assert_eq!(
        messages(&Function::new("f")),
        vec!["function has no blocks"]
    );
}

#[test]
fn entry_block_with_parameters() {
    let f = build(|b| {
        let e = b.current_block().unwrap();
        b.append_block_param(e, Type::I32);
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec!["block0: entry block must not have parameters"]
    );
}

#[test]
fn missing_terminator() {
    let f = build(|b| {
        b.iconst(Type::I32, 1);
    });
    assert_eq!(messages(&f), vec!["block0: does not end with a terminator"]);
    // An empty block has no terminator either.
    let f = build(|b| {
        b.create_block();
        b.ret();
    });
    assert_eq!(messages(&f), vec!["block1: does not end with a terminator"]);
}

#[test]
fn terminator_in_the_middle() {
    let f = build(|b| {
        b.ret();
        b.iconst(Type::I32, 1);
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec!["inst0: terminator in the middle of block0"]
    );
}

#[test]
fn value_from_elsewhere() {
    let f = build(|b| {
        let x = b.iconst(Type::I32, 1);
        b.add(x, Value::new(99));
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec!["inst1: v99 is not defined in this function"]
    );
}

#[test]
fn use_before_definition_in_the_same_block() {
    let f = build(|b| {
        let x = b.iconst(Type::I32, 1);
        // v2 is the result of the next instruction.
        b.add(x, Value::new(2));
        b.iconst(Type::I32, 2);
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec!["inst1: use of v2 is not dominated by its definition"]
    );
}

#[test]
fn use_in_a_block_not_dominated_by_the_definition() {
    // block0 branches to block1 or block2, both jump to block3; a value defined in block1 is
    // used in block3, which block2 also reaches.
    let f = build(|b| {
        let c = b.iconst(Type::I32, 0);
        let p = b.icmp(leafold::ir::IntCC::Eq, c, c);
        let b1 = b.create_block();
        let b2 = b.create_block();
        let b3 = b.create_block();
        b.brif(p, b1, &[], b2, &[]);
        b.switch_to_block(b1);
        let x = b.iconst(Type::I32, 5);
        b.jump(b3, &[]);
        b.switch_to_block(b2);
        b.jump(b3, &[]);
        b.switch_to_block(b3);
        b.add(x, x);
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec![
            "inst6: use of v2 is not dominated by its definition",
            "inst6: use of v2 is not dominated by its definition",
        ]
    );
}

#[test]
fn operand_types_must_match_the_opcode() {
    let f = build(|b| {
        let a = b.iconst(Type::I32, 1);
        let w = b.iconst(Type::I64, 1);
        b.add(a, w);
        b.shl(w, w);
        b.sext(Type::I16, a);
        b.trunc(Type::I64, a);
        b.mul_wide(true, w, w);
        b.brif(a, Block::new(0), &[], Block::new(0), &[]);
    });
    assert_eq!(
        messages(&f),
        vec![
            "inst2: add: operands must have the same type, got i32 and i64",
            "inst3: shl: shift count must be i32, got i64",
            "inst4: sext: i16 is not wider than i32",
            "inst5: trunc: i64 is not narrower than i32",
            "inst6: mulwide: operands must be i16 or i32, got i64",
            "inst7: brif: condition must be pred, got i32",
        ]
    );
}

#[test]
fn memory_operations_are_checked() {
    let f = build(|b| {
        let a = b.iconst(Type::I64, 0);
        let x = b.iconst(Type::I32, 0);
        let h = b.iconst(Type::I16, 0);
        let p = b.icmp(leafold::ir::IntCC::Eq, x, x);
        b.store(Space::Const, a, 0, &[x]);
        b.store(Space::Global, a, 0, &[x, h]);
        b.store(Space::Global, a, 0, &[x, x, x]);
        b.load(Space::Global, Type::I32, 2, h, 0);
        b.store(Space::Global, a, 0, &[p]);
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec![
            "inst4: store: the const space is read-only",
            "inst5: store: v2 is i16, expected i32",
            "inst6: store: vector width must be 1, 2 or 4, got 3",
            "inst7: load: address must be i32 or i64, got i16",
            "inst8: store: cannot store a pred",
        ]
    );
}

#[test]
fn branch_to_a_block_outside_the_layout() {
    let f = build(|b| {
        b.jump(Block::new(7), &[]);
    });
    assert_eq!(
        messages(&f),
        vec!["inst0: branch to block7, which is not in the layout"]
    );
}

#[test]
fn block_argument_count_and_types() {
    let f = build(|b| {
        let x = b.iconst(Type::I32, 1);
        let w = b.iconst(Type::I64, 1);
        let c = b.icmp(leafold::ir::IntCC::Eq, x, x);
        let next = b.create_block();
        b.append_block_param(next, Type::I32);
        b.brif(c, next, &[], next, &[w]);
        b.switch_to_block(next);
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec![
            "inst3: block1 takes 1 arguments, got 0",
            "inst3: argument 0 to block1 is i64, expected i32",
        ]
    );
}

#[test]
fn duplicate_block_and_instruction() {
    let mut f = build(|b| {
        b.ret();
    });
    f.layout.push(f.layout[0]);
    assert_eq!(
        messages(&f),
        vec!["block0 appears more than once in the layout"]
    );

    let mut f = build(|b| {
        b.ret();
    });
    let inst = f.blocks[Block::new(0)].insts[0];
    f.blocks[Block::new(0)].insts.push(inst);
    assert_eq!(
        messages(&f),
        vec!["inst0: instruction is placed more than once"]
    );
}

#[test]
fn unknown_module_variable() {
    let f = build(|b| {
        b.symbol_addr(Type::I64, GlobalVar::new(3));
        b.ret();
    });
    assert_eq!(verify(&f), Ok(()));
    let m = Module {
        functions: vec![f],
        ..Module::default()
    };
    assert_eq!(
        verify_module(&m),
        Err(vec![VerifierError::UnknownVar {
            inst: leafold::ir::Inst::new(0),
            var: GlobalVar::new(3),
        }])
    );
    assert_eq!(
        verify_module(&m).unwrap_err()[0].to_string(),
        "inst0: gv3 is not a variable of the module"
    );
}

#[test]
fn unreachable_blocks_skip_dominance_but_not_types() {
    let f = build(|b| {
        let x = b.iconst(Type::I32, 1);
        b.ret();
        let dead = b.create_block();
        b.switch_to_block(dead);
        // Uses v2, defined later in this same unreachable block: not reported.
        b.add(x, Value::new(2));
        b.iconst(Type::I32, 2);
        let w = b.iconst(Type::I64, 1);
        b.add(x, w);
        b.ret();
    });
    assert_eq!(
        messages(&f),
        vec!["inst5: add: operands must have the same type, got i32 and i64"]
    );
}

#[test]
fn inconsistent_entity_tables() {
    let mut f = build(|b| {
        b.ret();
    });
    f.layout.push(Block::new(9));
    assert_eq!(
        messages(&f),
        vec!["block9 is in the layout but not in the function"]
    );

    let mut f = build(|b| {
        b.ret();
    });
    f.blocks[Block::new(0)]
        .insts
        .insert(0, leafold::ir::Inst::new(5));
    assert_eq!(
        messages(&f),
        vec!["block0 lists inst5, which is not in the function"]
    );

    // A block parameter list naming a value that is some instruction's result.
    let mut f = build(|b| {
        let x = b.iconst(Type::I32, 1);
        let next = b.create_block();
        b.append_block_param(next, Type::I32);
        b.jump(next, &[x]);
        b.switch_to_block(next);
        b.ret();
    });
    f.blocks[Block::new(1)].params[0] = Value::new(0);
    assert_eq!(
        messages(&f),
        vec!["block1: parameter v0 is not that block's parameter"]
    );

    let mut f = build(|b| {
        b.iconst(Type::I32, 1);
        b.ret();
    });
    f.insts[leafold::ir::Inst::new(0)].results[0] = Value::new(40);
    assert_eq!(
        messages(&f),
        vec!["inst0: result v40 is not defined by this instruction"]
    );
}

#[test]
fn oversized_params_saturate_instead_of_overflowing() {
    let mut f = Function::new("f");
    assert_eq!(f.add_param("a", u32::MAX - 2, 1), 0);
    assert_eq!(f.add_param("b", 8, 8), u32::MAX);
    assert_eq!(f.param_size(), u32::MAX);
    assert_eq!(f.param("b").map(|p| p.size), Some(8));
}
