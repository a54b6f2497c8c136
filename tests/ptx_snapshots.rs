//! Snapshots of `--dump-ast` for the seeds' examples in tests/data/ptx/*.ptx (each file says in
//! its header what it pins down). Every file must also check clean and round-trip.

use leafold::ptx;
use leafold::SourceFile;

fn dump(name: &str) -> String {
    let path = format!("{}/tests/data/ptx/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let file = SourceFile::new(format!("{name}.ptx"), text);
    let (module, warnings) = match ptx::parse_and_check(&file) {
        Ok(ok) => ok,
        Err(d) => panic!("{name}.ptx does not check clean:\n{d}"),
    };
    assert!(warnings.is_empty(), "{warnings:?}");
    let printed = module.to_string();
    let (again, _) = ptx::parse(&SourceFile::new("printed", printed));
    assert!(again.unwrap().without_spans() == module.without_spans());
    ptx::dump_ast(&module)
}

macro_rules! snap {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), dump(stringify!($name)));
        }
    )*};
}

snap!(
    variables,
    arrays_initializers,
    addresses,
    vectors,
    immediates,
    conversions,
    functions
);
