//! Matrix Market files: exact round trips, symmetric expansion, and a
//! line-numbered error for every kind of malformed input.

mod common;

use std::io::Write;
use std::path::PathBuf;

use ndarray::array;
use proptest::prelude::*;
use subla_algebra::mtx::{read_matrix_market, read_matrix_market_file, write_matrix_market, write_matrix_market_file};
use subla_algebra::proptest_support::{csc, csr};
use subla_algebra::{AlgebraError, CscMat, CsrMat, Par};

/// Values that stress shortest round-trip formatting.
fn tricky_f64() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        any::<f64>().prop_filter("NaN has no bitwise round trip", |v| !v.is_nan()),
        prop::num::f64::SUBNORMAL,
        (-1000i32..1000).prop_map(f64::from),
        Just(1.0 / 3.0),
        Just(1e-300),
        Just(-0.0),
        Just(0.0),
        Just(5e-324),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.1 + 0.2),
    ]
}

fn write_to_vec<T: Copy + Into<f64>>(m: subla_algebra::CsrRef<'_, T>) -> Vec<u8> {
    let mut out = Vec::new();
    write_matrix_market(m, &mut out).unwrap();
    out
}

fn tmp_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("subla-mtx-{}-{name}", std::process::id()))
}

proptest! {
    #[test]
    fn round_trip_is_bitwise_exact(a in csr(0..30, 0..30, 8, tricky_f64())) {
        let text = write_to_vec(a.as_ref());
        let b = read_matrix_market(&text[..]).unwrap();
        prop_assert_eq!(b.pattern(), a.pattern());
        prop_assert_eq!(common::bits(b.values()), common::bits(a.values()));
    }

    #[test]
    fn csc_round_trip_reads_back_as_the_same_matrix_in_csr(a in csc(0..25, 0..25, 6, tricky_f64())) {
        let mut text = Vec::new();
        write_matrix_market(a.as_ref(), &mut text).unwrap();
        let b = read_matrix_market(&text[..]).unwrap();
        let expected = a.to_csr(Par::Seq);
        prop_assert_eq!(b.pattern(), expected.pattern());
        prop_assert_eq!(common::bits(b.values()), common::bits(expected.values()));
    }

    #[test]
    fn f32_values_read_back_as_their_exact_f64_value(
        a in csr(0..20, 0..20, 6, any::<f32>().prop_filter("not NaN", |v| !v.is_nan())),
    ) {
        let b = read_matrix_market(&write_to_vec(a.as_ref())[..]).unwrap();
        prop_assert_eq!(b.pattern(), a.pattern());
        let expected: Vec<f64> = a.values().iter().map(|&v| f64::from(v)).collect();
        prop_assert_eq!(common::bits(b.values()), common::bits(&expected));
        // And back to f32 without loss.
        let back: Vec<u32> = b.values().iter().map(|&v| (v as f32).to_bits()).collect();
        let orig: Vec<u32> = a.values().iter().map(|v| v.to_bits()).collect();
        prop_assert_eq!(back, orig);
    }
}

proptest! {
    /// Damaged files give an error (or, by luck, another valid matrix),
    /// never a panic.
    #[test]
    fn damaged_input_never_panics(
        a in csr(0..6, 0..6, 4, -9i32..9),
        symmetry in prop_oneof![Just("general"), Just("symmetric"), Just("skew-symmetric")],
        field in prop_oneof![Just("real"), Just("integer"), Just("pattern")],
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let mut text = Vec::new();
        write_matrix_market(a.as_ref(), &mut text).unwrap();
        let header_end = text.iter().position(|&b| b == b'\n').unwrap();
        let header = format!("%%MatrixMarket matrix coordinate {field} {symmetry}");
        text.splice(..header_end, header.bytes());
        for (at, byte, op) in edits {
            let at = at.index(text.len() + 1);
            match op {
                0 if at < text.len() => text[at] = byte,
                1 => text.insert(at, byte),
                _ if at < text.len() => { text.remove(at); }
                _ => {}
            }
        }
        let _ = read_matrix_market(&text[..]);
    }
}

/// Delivers its input a few bytes per read, to cross every chunk boundary.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.1 = self.1 % 3 + 1;
        let n = self.1.min(buf.len()).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

proptest! {
    #[test]
    fn small_reads_give_the_same_matrix(a in csr(0..12, 0..12, 5, -9i32..9), crlf in any::<bool>()) {
        let mut text = Vec::new();
        write_matrix_market(a.as_ref(), &mut text).unwrap();
        if crlf {
            text = String::from_utf8(text).unwrap().replace('\n', "\r\n").into_bytes();
        }
        let b = read_matrix_market(std::io::BufReader::with_capacity(1, Trickle(&text, 0))).unwrap();
        prop_assert_eq!(b, a.map_values(f64::from));
    }
}

#[test]
fn lines_longer_than_the_read_buffer() {
    let comment = format!("%{}\n", "-".repeat(3 << 20));
    let text = format!("{GENERAL}{comment}2 2 1\n{comment}2 1 {}5\n", "0".repeat(3 << 20));
    let a = read_matrix_market(text.as_bytes()).unwrap();
    assert_eq!(a.as_ref().to_dense(), array![[0.0, 0.0], [5.0, 0.0]]);
    let b = read_matrix_market(std::io::BufReader::new(Trickle(text.as_bytes(), 0))).unwrap();
    assert_eq!(a, b);
}

#[test]
fn writes_the_documented_text_in_storage_order() {
    let a = CsrMat::try_new(3, 4, vec![0, 2, 2, 3], vec![0, 3, 1], vec![1.5, -2.0, 1.0 / 3.0]).unwrap();
    let text = String::from_utf8(write_to_vec(a.as_ref())).unwrap();
    assert_eq!(
        text,
        "%%MatrixMarket matrix coordinate real general\n% written by subla\n3 4 3\n1 1 1.5\n1 4 -2.0\n3 2 0.3333333333333333\n"
    );
    // CSC: column by column, still `row col value`.
    let c = a.to_csc(Par::Seq);
    let mut out = Vec::new();
    write_matrix_market(c.as_ref(), &mut out).unwrap();
    let body: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().skip(3).collect();
    assert_eq!(body, ["1 1 1.5", "3 2 0.3333333333333333", "1 4 -2.0"]);
}

#[test]
fn integer_matrices_are_written_as_real() {
    let m = CscMat::try_from_triplets(3, 1, &[(0, 0, 1u32), (2, 0, 3)]).unwrap();
    let mut out = Vec::new();
    write_matrix_market(m.as_ref(), &mut out).unwrap();
    let back = read_matrix_market(&out[..]).unwrap();
    assert_eq!(back.as_ref().to_dense(), array![[1.0], [0.0], [3.0]]);
}

#[test]
fn empty_matrices_round_trip() {
    for (r, c) in [(0, 0), (0, 5), (5, 0), (3, 3)] {
        let a = CsrMat::<f64>::zeros(r, c).unwrap();
        assert_eq!(read_matrix_market(&write_to_vec(a.as_ref())[..]).unwrap(), a);
    }
}

#[test]
fn symmetric_files_are_expanded() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n\
                3 3 4\n\
                1 1 2.0\n\
                2 1 -1\n\
                3 2 0.5\n\
                1 3 7\n";
    let a = read_matrix_market(text.as_bytes()).unwrap();
    // (1, 3) was stored above the diagonal: mirrored all the same.
    assert_eq!(a.as_ref().to_dense(), array![[2.0, -1.0, 7.0], [-1.0, 0.0, 0.5], [7.0, 0.5, 0.0]]);
    assert_eq!(a.nnz(), 7);
}

#[test]
fn skew_symmetric_files_are_expanded_with_negated_mirrors() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n3 1 -1.5\n";
    let a = read_matrix_market(text.as_bytes()).unwrap();
    assert_eq!(a.as_ref().to_dense(), array![[0.0, -4.0, 1.5], [4.0, 0.0, 0.0], [-1.5, 0.0, 0.0]]);
}

#[test]
fn pattern_and_integer_fields() {
    let p = "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n";
    let a = read_matrix_market(p.as_bytes()).unwrap();
    assert_eq!(a.as_ref().to_dense(), array![[1.0, 1.0], [1.0, 0.0]]);
    let i = "%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 3 -12\n2 2 +5\n";
    let b = read_matrix_market(i.as_bytes()).unwrap();
    assert_eq!(b.as_ref().to_dense(), array![[0.0, 0.0, -12.0], [0.0, 5.0, 0.0]]);
}

#[test]
fn duplicates_are_summed_and_explicit_zeros_kept() {
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 5\n2 2 1\n1 2 0\n2 2 0.5\n2 1 3\n2 2 0.25\n";
    let a = read_matrix_market(text.as_bytes()).unwrap();
    assert_eq!(a.ptr(), &[0, 1, 3]);
    assert_eq!(a.indices(), &[1, 0, 1]);
    assert_eq!(a.values(), &[0.0, 3.0, 1.75]);
}

#[test]
fn comments_blank_lines_crlf_and_header_case_are_accepted() {
    let text = "%%matrixmarket MATRIX Coordinate REAL General\r\n\
                % comment before the size line\r\n\
                \r\n\
                2 2 2\r\n\
                % comment between entries\r\n\
                \t1   2\t 3e0  \r\n\
                \r\n\
                2 1 -4\r\n\
                % trailing comment\r\n";
    let a = read_matrix_market(text.as_bytes()).unwrap();
    assert_eq!(a.as_ref().to_dense(), array![[0.0, 3.0], [-4.0, 0.0]]);
}

#[test]
fn reads_a_file_written_by_hand() {
    let path = tmp_path("by-hand.mtx");
    std::fs::write(
        &path,
        "%%MatrixMarket matrix coordinate real general\n\
         %-------------------------------------------\n\
         % A 4 x 3 refinement-like matrix, by hand.\n\
         %-------------------------------------------\n\
         4 3 6\n\
         1 1 1\n\
         1 3 4\n\
         2 2 3\n\
         3 1 2\n\
         3 3 5\n\
         4 3 6\n",
    )
    .unwrap();
    let a = read_matrix_market_file(&path).unwrap();
    let expected =
        CsrMat::try_new(4, 3, vec![0, 2, 3, 5, 6], vec![0, 2, 1, 0, 2, 2], vec![1.0, 4.0, 3.0, 2.0, 5.0, 6.0]).unwrap();
    assert_eq!(a, expected);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn file_round_trip() {
    let path = tmp_path("round-trip.mtx");
    let a = CsrMat::try_new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0 / 3.0, -0.0, 1e-300]).unwrap();
    write_matrix_market_file(a.as_ref(), &path).unwrap();
    let b = read_matrix_market_file(&path).unwrap();
    assert_eq!(b.pattern(), a.pattern());
    assert_eq!(common::bits(b.values()), common::bits(a.values()));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn file_errors_name_the_path() {
    let missing = tmp_path("does-not-exist.mtx");
    match read_matrix_market_file(&missing) {
        Err(e @ AlgebraError::Io { action: "open", .. }) => {
            let AlgebraError::Io { path, kind, .. } = &e else { unreachable!() };
            assert_eq!(path, &missing);
            assert_eq!(*kind, std::io::ErrorKind::NotFound);
            assert!(e.to_string().contains(&*missing.to_string_lossy()), "{e}");
        }
        other => panic!("expected an open error, got {other:?}"),
    }

    let bad = tmp_path("malformed.mtx");
    std::fs::write(&bad, "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n").unwrap();
    let e = read_matrix_market_file(&bad).unwrap_err();
    assert_eq!(
        e,
        AlgebraError::MatrixMarket {
            path: Some(bad.clone()),
            line: 3,
            reason: "row index 3 out of range (the matrix has 2 rows)".into()
        }
    );
    assert!(e.to_string().contains(&*bad.to_string_lossy()) && e.to_string().contains("line 3"), "{e}");
    std::fs::remove_file(&bad).unwrap();

    let nowhere = tmp_path("no-such-dir").join("out.mtx");
    let a = CsrMat::<f64>::zeros(1, 1).unwrap();
    match write_matrix_market_file(a.as_ref(), &nowhere) {
        Err(AlgebraError::Io { action: "create", path, .. }) => assert_eq!(path, nowhere),
        other => panic!("expected a create error, got {other:?}"),
    }
}

#[test]
fn writer_errors_are_returned() {
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let a = CsrMat::try_new(1, 1, vec![0, 1], vec![0], vec![1.0]).unwrap();
    let e = write_matrix_market(a.as_ref(), Full).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
}

#[test]
fn stream_read_errors_name_the_line() {
    struct Failing(usize);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let text = b"%%MatrixMarket matrix coordinate real general\n2 2 1\n";
            if self.0 >= text.len() {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = (text.len() - self.0).min(buf.len());
            buf[..n].copy_from_slice(&text[self.0..self.0 + n]);
            self.0 += n;
            Ok(n)
        }
    }
    let e = read_matrix_market(std::io::BufReader::new(Failing(0))).unwrap_err();
    match e {
        AlgebraError::MatrixMarket { path: None, line: 3, reason } => {
            assert!(reason.contains("disk on fire"), "{reason}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

const GENERAL: &str = "%%MatrixMarket matrix coordinate real general\n";

/// Every malformed input: the error, its line, and a piece of its reason.
#[test]
fn malformed_input_gives_line_numbered_errors() {
    let long = format!("{GENERAL}2 2 1\n1 1 {}\n", "x".repeat(100));
    let cases: Vec<(String, usize, &str)> = vec![
        // Header.
        (String::new(), 1, "empty input"),
        ("2 2 1\n1 1 1\n".into(), 1, "missing header"),
        ("\n%%MatrixMarket matrix coordinate real general\n1 1 0\n".into(), 1, "missing header"),
        ("%%MatrixMarket vector coordinate real general\n".into(), 1, "unsupported object `vector`"),
        ("%%MatrixMarket matrix array real general\n".into(), 1, "unsupported format `array`"),
        ("%%MatrixMarket matrix sparse real general\n".into(), 1, "unknown format `sparse`"),
        ("%%MatrixMarket matrix coordinate complex general\n".into(), 1, "unsupported field `complex`"),
        ("%%MatrixMarket matrix coordinate quaternion general\n".into(), 1, "unknown field `quaternion`"),
        ("%%MatrixMarket matrix coordinate real hermitian\n".into(), 1, "unsupported symmetry `hermitian`"),
        ("%%MatrixMarket matrix coordinate real lopsided\n".into(), 1, "unknown symmetry `lopsided`"),
        ("%%MatrixMarket matrix coordinate real\n".into(), 1, "incomplete header"),
        ("%%MatrixMarket matrix\n".into(), 1, "incomplete header"),
        ("%%MatrixMarket matrix coordinate real general extra\n".into(), 1, "unexpected `extra`"),
        ("%%MatrixMarket matrix coordinate pattern skew-symmetric\n".into(), 1, "not a valid combination"),
        // Size line.
        (GENERAL.into(), 2, "missing size line"),
        (format!("{GENERAL}% only a comment\n\n"), 4, "missing size line"),
        (format!("{GENERAL}2 2\n"), 2, "found 2 fields"),
        (format!("{GENERAL}2 2 1 1\n"), 2, "found 4 fields"),
        (format!("{GENERAL}% c\nx 2 1\n"), 3, "nrows `x` is not a non-negative integer"),
        (format!("{GENERAL}2 -2 1\n"), 2, "ncols `-2` is not a non-negative integer"),
        (format!("{GENERAL}2 2 1.5\n"), 2, "number of entries `1.5` is not"),
        (format!("{GENERAL}4294967296 1 0\n"), 2, "nrows = 4294967296 does not fit in a u32"),
        (format!("{GENERAL}1 99999999999999999999999 0\n"), 2, "ncols `99999999999999999999999`"),
        ("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n".into(), 2, "must be square"),
        // Entries.
        (format!("{GENERAL}2 2 1\n0 1 1.0\n"), 3, "row index 0: indices are 1-based"),
        (format!("{GENERAL}2 2 1\n1 0 1.0\n"), 3, "column index 0: indices are 1-based"),
        (format!("{GENERAL}2 2 1\n3 1 1.0\n"), 3, "row index 3 out of range (the matrix has 2 rows)"),
        (format!("{GENERAL}2 2 2\n1 1 1\n% c\n1 3 1.0\n"), 5, "column index 3 out of range (the matrix has 2 columns)"),
        (format!("{GENERAL}2 2 1\n-1 1 1.0\n"), 3, "row index `-1` is not a positive integer"),
        (format!("{GENERAL}2 2 1\n1 b 1.0\n"), 3, "column index `b` is not a positive integer"),
        (format!("{GENERAL}2 2 1\n1 1.0 1.0\n"), 3, "column index `1.0` is not a positive integer"),
        (format!("{GENERAL}2 2 1\n1 1 abc\n"), 3, "value `abc` is not a real number"),
        (format!("{GENERAL}2 2 1\n1 1 1,5\n"), 3, "value `1,5` is not a real number"),
        (long, 3, "is not a real number"),
        (
            "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n".into(),
            3,
            "value `1.5` is not an integer",
        ),
        (format!("{GENERAL}2 2 1\n1 1\n"), 3, "expected `row col value`, found 2 fields"),
        (format!("{GENERAL}2 2 1\n1\n"), 3, "expected `row col value`, found 1 field"),
        (format!("{GENERAL}2 2 1\n1 1 1 1\n"), 3, "expected `row col value`, found 4 fields"),
        ("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n".into(), 3, "expected `row col`, found 3"),
        ("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 1\n".into(), 3, "diagonal entry (2, 2)"),
        // Counts.
        (format!("{GENERAL}2 2 3\n1 1 1\n2 2 1\n"), 5, "input ends after 2 of the 3 entries declared on line 2"),
        (format!("{GENERAL}2 2 1\n"), 3, "input ends after 0 of the 1 entries"),
        (format!("{GENERAL}2 2 1\n1 1 1\n% fine\n\n2 2 1\n"), 6, "more entries than the 1 declared on line 2"),
    ];
    for (input, line, reason) in cases {
        match read_matrix_market(input.as_bytes()) {
            Err(AlgebraError::MatrixMarket { path: None, line: l, reason: r }) => {
                assert_eq!(l, line, "wrong line for {input:?}: {r}");
                assert!(r.contains(reason), "for {input:?}: expected {reason:?} in {r:?}");
            }
            other => panic!("for {input:?}: expected a Matrix Market error, got {other:?}"),
        }
    }
}

#[test]
fn invalid_utf8_is_an_error_not_a_panic() {
    let mut input = format!("{GENERAL}2 2 1\n1 1 1").into_bytes();
    input.extend_from_slice(b"\xff\xfe\n");
    match read_matrix_market(&input[..]) {
        Err(AlgebraError::MatrixMarket { line: 3, reason, .. }) => assert!(reason.contains("is not a real number")),
        other => panic!("unexpected {other:?}"),
    }
    let mut header = b"%%MatrixMarket matrix coordinate real \xc3(\n".to_vec();
    header.extend_from_slice(b"1 1 0\n");
    assert!(matches!(read_matrix_market(&header[..]), Err(AlgebraError::MatrixMarket { line: 1, .. })));
}

#[test]
fn errors_display_their_line() {
    let e = read_matrix_market(format!("{GENERAL}2 2 1\n1 1 x\n").as_bytes()).unwrap_err();
    assert_eq!(e.to_string(), "Matrix Market line 3: value `x` is not a real number");
}
