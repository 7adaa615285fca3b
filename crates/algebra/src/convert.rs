//! CSC ↔ CSR conversion by a deterministic parallel counting sort.
//!
//! Converting the layout of a matrix (not transposing it: the free
//! [`SparseRef::transpose`](crate::SparseRef::transpose) does that) moves
//! every entry from its major slice to the slice of its minor index. The
//! destination of an entry is its bucket's start plus the number of entries
//! of the same bucket that precede it in storage order: the deterministic
//! version of the occurrence offsets of Mlakar et al. 2020, Alg. 1.
//!
//! In parallel, the major slices are cut into `B` blocks; block `b` counts
//! its own histogram, an exclusive scan across blocks gives each block its
//! private write cursor per bucket, and blocks then fill independently. The
//! output is sorted and identical for every `B`.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::par::{Par, SharedMut, balanced_ranges};
use crate::storage::{Layout, Pattern, PatternRef, SparseMat, SparseRef};

/// Offsets per (block, bucket): `cursors[b][m]` is where block `b` writes its
/// first entry of bucket `m`. Also returns the new pointer array.
fn cursors(ptr: &[u32], idx: &[u32], minor: usize, par: Par) -> (Vec<u32>, Vec<std::ops::Range<usize>>, Vec<Vec<u32>>) {
    let nnz = idx.len();
    // A histogram costs `minor` words per block: use more blocks only when
    // the matrix holds enough entries to pay for them.
    let nblocks = match par {
        Par::Seq => 1,
        Par::Rayon => par.threads().min(nnz / minor.max(1) / 2 + 1).min(nnz / 4096 + 1),
    };
    let blocks = balanced_ranges(ptr, nblocks);
    let mut hists: Vec<Vec<u32>> = vec![Vec::new(); blocks.len()];
    let count = |range: &std::ops::Range<usize>, h: &mut Vec<u32>| {
        *h = vec![0u32; minor];
        for &n in &idx[ptr[range.start] as usize..ptr[range.end] as usize] {
            h[n as usize] += 1;
        }
    };
    if blocks.len() == 1 {
        count(&blocks[0], &mut hists[0]);
    } else {
        blocks.par_iter().zip(hists.par_iter_mut()).for_each(|(r, h)| count(r, h));
    }
    // Bucket totals, then their exclusive scan (integers: exact whatever the
    // order), then each block's cursor = bucket start + the counts of the
    // blocks before it. Blocks go in order; buckets are processed in parallel.
    let parallel = blocks.len() > 1;
    let zip2 = |a: &mut [u32], b: &mut [u32], f: &(dyn Fn(&mut u32, &mut u32) + Sync)| {
        if parallel {
            a.par_chunks_mut(1 << 14)
                .zip(b.par_chunks_mut(1 << 14))
                .for_each(|(a, b)| a.iter_mut().zip(b).for_each(|(a, b)| f(a, b)));
        } else {
            a.iter_mut().zip(b).for_each(|(a, b)| f(a, b));
        }
    };
    let mut new_ptr = vec![0u32; minor + 1];
    for h in hists.iter_mut() {
        zip2(&mut new_ptr[..minor], h, &|total, count| *total += *count);
    }
    let mut acc = 0u32;
    for p in new_ptr.iter_mut() {
        let count = *p;
        *p = acc;
        acc += count;
    }
    let mut running = new_ptr[..minor].to_vec();
    for h in hists.iter_mut() {
        zip2(h, &mut running, &|slot, cursor| {
            let count = *slot;
            *slot = *cursor;
            *cursor += count;
        });
    }
    (new_ptr, blocks, hists)
}

fn fill<T: Clone + Send + Sync>(
    ptr: &[u32],
    idx: &[u32],
    values: Option<&[T]>,
    blocks: &[std::ops::Range<usize>],
    hists: Vec<Vec<u32>>,
    out_idx: &mut Vec<u32>,
    mut out_vals: Option<&mut Vec<T>>,
) {
    let nnz = idx.len();
    out_idx.clear();
    out_idx.reserve_exact(nnz);
    let idx_dst = SharedMut::new(&mut out_idx.spare_capacity_mut()[..nnz]);
    let vals_dst: Option<SharedMut<MaybeUninit<T>>> = out_vals.as_deref_mut().map(|v| {
        v.clear();
        v.reserve_exact(nnz);
        SharedMut::new(&mut v.spare_capacity_mut()[..nnz])
    });
    let work = |(range, mut cursor): (&std::ops::Range<usize>, Vec<u32>)| {
        for m in range.clone() {
            for p in ptr[m] as usize..ptr[m + 1] as usize {
                let n = idx[p] as usize;
                let dst = cursor[n] as usize;
                cursor[n] += 1;
                // SAFETY: the cursors of all blocks partition 0..nnz (each
                // bucket's range is split among blocks by the exclusive scan
                // of their counts), so every destination is written once.
                unsafe { idx_dst.write(dst, MaybeUninit::new(m as u32)) };
                if let (Some(dst_v), Some(src)) = (&vals_dst, values) {
                    // SAFETY: as above.
                    unsafe { dst_v.write(dst, MaybeUninit::new(src[p].clone())) };
                }
            }
        }
    };
    if blocks.len() == 1 {
        blocks.iter().zip(hists).for_each(work);
    } else {
        blocks.par_iter().zip(hists.into_par_iter()).for_each(work);
    }
    // SAFETY: all nnz positions were written (see above).
    unsafe { out_idx.set_len(nnz) };
    if let Some(v) = out_vals {
        // SAFETY: likewise, when values were given.
        unsafe { v.set_len(nnz) };
    }
}

/// The same matrix stored in the other layout.
pub(crate) fn relayout<T: Clone + Send + Sync, L: Layout>(
    a: SparseRef<'_, T, L>,
    par: Par,
) -> SparseMat<T, L::Transposed> {
    let pat = a.pattern();
    let (nrows, ncols) = pat.dims_u32();
    let minor = pat.minor_dim();
    let (new_ptr, blocks, hists) = cursors(pat.ptr(), pat.indices(), minor, par);
    let mut idx = Vec::new();
    let mut vals = Vec::new();
    fill(pat.ptr(), pat.indices(), Some(a.values()), &blocks, hists, &mut idx, Some(&mut vals));
    // SAFETY: a counting sort of a valid matrix is valid in the other layout;
    // major slices are visited in increasing order so the new slices are
    // sorted.
    unsafe { SparseMat::new_unchecked(nrows, ncols, new_ptr, idx, vals) }
}

/// The same pattern stored in the other layout.
pub(crate) fn relayout_pattern<L: Layout>(a: PatternRef<'_, L>, par: Par) -> Pattern<L::Transposed> {
    let (nrows, ncols) = a.dims_u32();
    let minor = a.minor_dim();
    let (new_ptr, blocks, hists) = cursors(a.ptr(), a.indices(), minor, par);
    let mut idx = Vec::new();
    fill::<u32>(a.ptr(), a.indices(), None, &blocks, hists, &mut idx, None);
    // SAFETY: as in `relayout`.
    unsafe { Pattern::new_unchecked(nrows, ncols, new_ptr, idx) }
}
