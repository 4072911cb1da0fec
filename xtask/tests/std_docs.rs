//! The committed `std-docs` program is what `gpurun-dev std-docs` writes
//! from the pinned nightly's rust-src, so the corpus of std's examples the
//! GPU runs is std's, unedited.
use std::path::Path;

#[test]
fn committed_std_docs_is_what_the_generator_writes() {
    let src = xtask::std_docs::std_src().unwrap_or_else(|e| panic!("{e}"));
    let corpus = xtask::std_docs::generate(&src).unwrap_or_else(|e| panic!("{e}"));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(xtask::std_docs::OUTPUT);
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        committed == corpus.source,
        "{} differs from what `./gpurun-dev std-docs` writes from {}: run it and commit the result",
        path.display(),
        src.display()
    );
    assert!(corpus.kept > 0 && corpus.kept + corpus.left_out.len() == corpus.found);
}
