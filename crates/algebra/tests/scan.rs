//! Scans, compaction and enumeration against naive references.

mod common;

use proptest::prelude::*;
use subla_algebra::proptest_support::csc;
use subla_algebra::scan::{
    SCAN_BLOCK, compact, enumerate_nonzeros, exclusive_scan, exclusive_scan_inplace, inclusive_scan_inplace,
    offsets_from_counts, offsets_with,
};
use subla_algebra::{AlgebraError, Par};

proptest! {
    #[test]
    fn scans_match_naive(v in proptest::collection::vec(0u64..1000, 0..3 * SCAN_BLOCK)) {
        let mut naive_inc = Vec::with_capacity(v.len());
        let mut acc = 0u64;
        for &x in &v {
            acc += x;
            naive_inc.push(acc);
        }
        let mut inc = v.clone();
        let total = inclusive_scan_inplace(&mut inc, Par::Rayon);
        prop_assert_eq!(&inc, &naive_inc);
        prop_assert_eq!(total, acc);
        let mut exc = v.clone();
        let total = exclusive_scan_inplace(&mut exc, Par::Rayon);
        prop_assert_eq!(total, acc);
        for i in 0..v.len() {
            prop_assert_eq!(exc[i], naive_inc[i] - v[i]);
        }
        let ptr = exclusive_scan(&v, Par::Seq);
        prop_assert_eq!(ptr.len(), v.len() + 1);
        prop_assert_eq!(ptr[v.len()], acc);
    }

    #[test]
    fn offsets_with_match_offsets_from_counts(v in proptest::collection::vec(0u32..1000, 0..3 * SCAN_BLOCK)) {
        let naive = offsets_from_counts(&v, Par::Seq).unwrap();
        for par in [Par::Seq, Par::Rayon] {
            // Counts filled block by block, as a stateful caller would.
            let ptr = offsets_with(v.len(), par, |rows, out| out.copy_from_slice(&v[rows])).unwrap();
            prop_assert_eq!(&ptr, &naive);
        }
    }

    #[test]
    fn compaction_and_enumeration_match_naive(a in csc(0..30, 0..30, 10, 0u8..10)) {
        let en = enumerate_nonzeros(a.as_ref(), |i, j, &v| i > j && v % 2 == 0, Par::Rayon);
        let mut next = 0u32;
        for (p, (i, j, &v)) in a.as_ref().iter().enumerate() {
            let sel = i > j && v % 2 == 0;
            prop_assert_eq!(en.selected[p], sel);
            prop_assert_eq!(en.ids[p], next);
            if sel {
                prop_assert_eq!(en.id(p), Some(next));
                next += 1;
            }
        }
        prop_assert_eq!(en.count, next);
        let picked = compact(a.nnz(), |p| en.selected[p], Par::Rayon).unwrap();
        let naive: Vec<u32> = (0..a.nnz() as u32).filter(|&p| en.selected[p as usize]).collect();
        prop_assert_eq!(picked, naive);
    }
}

#[test]
fn float_scan_is_bitwise_identical_for_any_thread_count() {
    let v: Vec<f64> = (0..5 * SCAN_BLOCK + 17).map(|i| ((i as f64) * 0.7).sin()).collect();
    let mut seq = v.clone();
    exclusive_scan_inplace(&mut seq, Par::Seq);
    for t in [1, 2, 3, 4] {
        let mut par = v.clone();
        common::with_threads(t, || exclusive_scan_inplace(&mut par, Par::Rayon));
        assert_eq!(common::bits(&par), common::bits(&seq), "threads = {t}");
    }
}

#[test]
fn offsets_detect_overflow() {
    let counts = vec![u32::MAX / 2, u32::MAX / 2, 2];
    let e = offsets_from_counts(&counts, Par::Rayon).unwrap_err();
    assert!(matches!(e, AlgebraError::TooLarge { .. }), "{e}");
    assert_eq!(offsets_from_counts(&[1, 2, 3], Par::Rayon).unwrap(), vec![0, 1, 3, 6]);
    assert_eq!(offsets_from_counts(&[], Par::Rayon).unwrap(), vec![0]);
    // Within one block and across blocks.
    for (n, count) in [(3, u32::MAX / 2), (3 * SCAN_BLOCK, u32::MAX / (2 * SCAN_BLOCK as u32) + 1)] {
        for par in [Par::Seq, Par::Rayon] {
            let e = offsets_with(n, par, |_, out| out.fill(count)).unwrap_err();
            assert!(matches!(e, AlgebraError::TooLarge { value, .. } if value == n as u128 * u128::from(count)), "{e}");
        }
    }
    assert_eq!(offsets_with(0, Par::Rayon, |_, _| {}).unwrap(), vec![0]);
}
