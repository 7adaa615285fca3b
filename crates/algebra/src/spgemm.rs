//! Mapped sparse × sparse products with action maps and lambdas.
//!
//! Mlakar et al. 2020, §3.1 (the mapped SpGEMM definition after Eq. 1):
//!
//! ```text
//! C = A B {μ}[λ],     C(i, j) = ⊕_k λ( μ(A(i, k), B(k, j)), i, j, k, a, b )
//! ```
//!
//! Whenever a stored `a = A(i, k)` meets a stored `b = B(k, j)` (a
//! *collision*), the bivariate action map `μ` turns the pair into a value,
//! and the lambda `λ` — which also sees the indices and both operands —
//! decides what the collision contributes, or that it contributes nothing.
//! Contributions to the same `(i, j)` are combined with `⊕` (addition by
//! default). `C(i, j)` is stored if and only if at least one of its
//! collisions contributed, so **the lambda shapes the result pattern**: the
//! edge matrix `E` (Eq. 4), the face matrix `F` (Eq. 6–7) and the refined
//! topology `T` (Eq. 12) all rely on this.
//!
//! The pieces are generic parameters, never boxed:
//!
//! * `μ`: any `Fn(&A, &B) -> M`, or [`Multiply`] (the plain product `a * b`;
//!   costs nothing beyond it);
//! * `λ`: [`Keep`] (always `Some(μ)`), a stateless `Fn(M, &Collision) ->
//!   Option<V>` wrapped by [`Ops::new`], or a stateful one ([`Ops::stateful`]);
//! * `⊕`: [`Sum`] or any `Fn(V, V) -> V`.
//!
//! # Phases
//! [`symbolic`] computes the pattern of `C` (it runs `μ` and `λ` to learn
//! which entries exist), [`numeric`] writes the values into storage with that
//! pattern, and [`multiply`] does both in one pass. `symbolic` then `numeric`
//! gives exactly what `multiply` gives. [`structure`] is the lambda-free
//! pattern of the plain product, and [`product_nnz`] its size, counted
//! without building it. The plain product itself comes from [`product`]
//! (two passes, one exact allocation) or [`product_rows`] (one pass, rows
//! left in per-task blocks).
//!
//! # Order, state and determinism
//! A CSR product is computed row by row: for output row `i`, the collisions
//! are visited in increasing `k` (the order of `A`'s row `i`) and, for each
//! `k`, in increasing `j` (the order of `B`'s row `k`). A CSC product is
//! computed column by column: for output column `j`, increasing `k` over
//! `B`'s column `j`, then increasing `i` over `A`'s column `k`. `⊕` folds the
//! contributions to one entry in that visiting order.
//!
//! A stateful lambda gets a fresh state from `init(major)` for each output
//! *major slice* (row of a CSR result, column of a CSC result), sees that
//! slice's collisions in the order above, and drops the state afterwards.
//! Each slice is computed by exactly one task, so results are bitwise
//! identical for every [`Par`] and pool size. The lambda (and its state) is
//! run again by each phase: `symbolic` and `numeric` each start every slice
//! from a fresh state, so a lambda whose decisions depend only on its
//! inputs and its per-slice state gives the same pattern in both. Side
//! effects outside the state (through interior mutability) are outside this
//! contract.
//!
//! # Panics
//! If `A.ncols() != B.nrows()`, or if the storage passed to [`numeric`]
//! does not have the pattern that [`symbolic`] gives for the same operands.

use std::marker::PhantomData;
use std::ops::{Add, Mul, Range};

use rayon::prelude::*;

use crate::error::{Result, to_u32};
use crate::par::{Par, balanced_ranges, split_by_ptr, split_by_ranges, try_concat};
use crate::storage::{Csr, Layout, Pattern, PatternRef, SparseMat, SparseMut, SparseRef};

/// One collision of a stored `a = A(i, k)` with a stored `b = B(k, j)`.
#[derive(Debug)]
pub struct Collision<'a, A, B> {
    /// Row of the output entry.
    pub i: u32,
    /// Column of the output entry.
    pub j: u32,
    /// The shared inner index.
    pub k: u32,
    /// `A(i, k)`.
    pub a: &'a A,
    /// `B(k, j)`.
    pub b: &'a B,
}

/// A bivariate action map `μ(a, b)`.
pub trait ActionMap<A, B>: Sync {
    /// What the map produces.
    type Out;
    /// Maps one colliding pair.
    fn map(&self, a: &A, b: &B) -> Self::Out;
}

impl<A, B, M, F> ActionMap<A, B> for F
where
    F: Fn(&A, &B) -> M + Sync,
{
    type Out = M;
    #[inline(always)]
    fn map(&self, a: &A, b: &B) -> M {
        self(a, b)
    }
}

/// The plain product `μ(a, b) = a * b`.
#[derive(Copy, Clone, Debug, Default)]
pub struct Multiply;

impl<A, B> ActionMap<A, B> for Multiply
where
    A: Copy + Mul<B>,
    B: Copy,
{
    type Out = A::Output;
    #[inline(always)]
    fn map(&self, a: &A, b: &B) -> A::Output {
        *a * *b
    }
}

/// The lambda `λ(μ, i, j, k, a, b)` with optional per-slice state.
pub trait Lambda<M, A, B>: Sync {
    /// Per-major-slice state (`()` for stateless lambdas).
    type State;
    /// Value contributed by a collision.
    type Out;
    /// Fresh state for output slice `major` (row for CSR, column for CSC).
    fn init(&self, major: u32) -> Self::State;
    /// Contribution of one collision, or `None` for no contribution.
    fn call(&self, state: &mut Self::State, mapped: M, c: &Collision<'_, A, B>) -> Option<Self::Out>;
}

/// The lambda that keeps every mapped value: `λ = μ`.
#[derive(Copy, Clone, Debug, Default)]
pub struct Keep;

impl<M, A, B> Lambda<M, A, B> for Keep {
    type State = ();
    type Out = M;
    #[inline(always)]
    fn init(&self, _: u32) {}
    #[inline(always)]
    fn call(&self, _: &mut (), mapped: M, _: &Collision<'_, A, B>) -> Option<M> {
        Some(mapped)
    }
}

/// A stateless lambda `Fn(μ, &Collision) -> Option<V>`.
#[derive(Copy, Clone, Debug)]
pub struct Stateless<F>(pub F);

impl<M, A, B, V, F> Lambda<M, A, B> for Stateless<F>
where
    F: Fn(M, &Collision<'_, A, B>) -> Option<V> + Sync,
{
    type State = ();
    type Out = V;
    #[inline(always)]
    fn init(&self, _: u32) {}
    #[inline(always)]
    fn call(&self, _: &mut (), mapped: M, c: &Collision<'_, A, B>) -> Option<V> {
        (self.0)(mapped, c)
    }
}

/// A stateful lambda: `init(major)` makes the state of each output slice,
/// `call(&mut state, μ, &Collision)` handles one collision.
#[derive(Copy, Clone, Debug)]
pub struct Stateful<I, F> {
    /// State factory, called once per output slice.
    pub init: I,
    /// The lambda proper.
    pub call: F,
}

impl<M, A, B, S, V, I, F> Lambda<M, A, B> for Stateful<I, F>
where
    I: Fn(u32) -> S + Sync,
    F: Fn(&mut S, M, &Collision<'_, A, B>) -> Option<V> + Sync,
{
    type State = S;
    type Out = V;
    #[inline(always)]
    fn init(&self, major: u32) -> S {
        (self.init)(major)
    }
    #[inline(always)]
    fn call(&self, state: &mut S, mapped: M, c: &Collision<'_, A, B>) -> Option<V> {
        (self.call)(state, mapped, c)
    }
}

/// The reduction `⊕` combining contributions to one entry.
pub trait Reduce<V>: Sync {
    /// `acc ⊕ v`.
    fn reduce(&self, acc: V, v: V) -> V;
}

/// `⊕ = +`.
#[derive(Copy, Clone, Debug, Default)]
pub struct Sum;

impl<V: Add<Output = V>> Reduce<V> for Sum {
    #[inline(always)]
    fn reduce(&self, acc: V, v: V) -> V {
        acc + v
    }
}

impl<V, F: Fn(V, V) -> V + Sync> Reduce<V> for F {
    #[inline(always)]
    fn reduce(&self, acc: V, v: V) -> V {
        self(acc, v)
    }
}

/// The operators of a mapped product: map `μ`, lambda `λ`, reduction `⊕`.
#[derive(Copy, Clone, Debug)]
pub struct Ops<Map, Lam, Red> {
    /// The action map.
    pub map: Map,
    /// The lambda.
    pub lambda: Lam,
    /// The reduction.
    pub reduce: Red,
}

impl Ops<Multiply, Keep, Sum> {
    /// The ordinary product: `μ = a * b`, `λ = μ`, `⊕ = +`.
    pub fn product() -> Self {
        Ops { map: Multiply, lambda: Keep, reduce: Sum }
    }
}

impl<Map> Ops<Map, Keep, Sum> {
    /// A mapped product with `λ = μ` and `⊕ = +`.
    pub fn mapped<A, B, M>(map: Map) -> Self
    where
        Map: Fn(&A, &B) -> M + Sync,
    {
        Ops { map, lambda: Keep, reduce: Sum }
    }
}

impl<Map, F> Ops<Map, Stateless<F>, Sum> {
    /// A mapped product with a stateless lambda and `⊕ = +`.
    ///
    /// ```
    /// use subla_algebra::spgemm::{Collision, Ops};
    /// // Count collisions whose operands are equal.
    /// let ops = Ops::new(|a: &u32, b: &u32| a == b, |eq, _c: &Collision<'_, u32, u32>| eq.then_some(1u32));
    /// # let _ = ops;
    /// ```
    pub fn new<A, B, M, V>(map: Map, lambda: F) -> Self
    where
        Map: Fn(&A, &B) -> M + Sync,
        F: Fn(M, &Collision<'_, A, B>) -> Option<V> + Sync,
    {
        Ops { map, lambda: Stateless(lambda), reduce: Sum }
    }
}

impl<Map, Lam, Red> Ops<Map, Lam, Red> {
    /// Replaces the lambda by a stateful one (see the [module docs](self)
    /// for how state is scoped).
    pub fn stateful<A, B, M, S, V, I, F>(self, init: I, call: F) -> Ops<Map, Stateful<I, F>, Red>
    where
        Map: ActionMap<A, B, Out = M>,
        I: Fn(u32) -> S + Sync,
        F: Fn(&mut S, M, &Collision<'_, A, B>) -> Option<V> + Sync,
    {
        Ops { map: self.map, lambda: Stateful { init, call }, reduce: self.reduce }
    }

    /// Replaces the reduction `⊕`.
    pub fn reduce<V, R: Fn(V, V) -> V + Sync>(self, reduce: R) -> Ops<Map, Lam, R> {
        Ops { map: self.map, lambda: self.lambda, reduce }
    }
}

// ---------------------------------------------------------------------------
// Kernel (CSR × CSR → CSR; CSC products are run on the transposed storage)
// ---------------------------------------------------------------------------

/// What the kernel needs from a product, in its own orientation: output row
/// `i` of `X · Y`, collisions `(i, j, k, x, y)`.
trait Visit<X, Y>: Sync {
    type State;
    type Out: Copy + Default + Send + Sync;
    fn init(&self, i: u32) -> Self::State;
    fn visit(&self, st: &mut Self::State, i: u32, j: u32, k: u32, x: &X, y: &Y) -> Option<Self::Out>;
    fn reduce(&self, acc: Self::Out, v: Self::Out) -> Self::Out;
}

/// `A · B` with both in CSR: kernel orientation = product orientation.
struct Straight<'o, Map, Lam, Red, A, B>(&'o Ops<Map, Lam, Red>, PhantomData<fn(&A, &B)>);

impl<Map, Lam, Red, A, B> Visit<A, B> for Straight<'_, Map, Lam, Red, A, B>
where
    Map: ActionMap<A, B>,
    Lam: Lambda<Map::Out, A, B>,
    Lam::Out: Copy + Default + Send + Sync,
    Red: Reduce<Lam::Out>,
{
    type State = Lam::State;
    type Out = Lam::Out;
    #[inline(always)]
    fn init(&self, i: u32) -> Self::State {
        self.0.lambda.init(i)
    }
    #[inline(always)]
    fn visit(&self, st: &mut Self::State, i: u32, j: u32, k: u32, a: &A, b: &B) -> Option<Self::Out> {
        let m = self.0.map.map(a, b);
        self.0.lambda.call(st, m, &Collision { i, j, k, a, b })
    }
    #[inline(always)]
    fn reduce(&self, acc: Self::Out, v: Self::Out) -> Self::Out {
        self.0.reduce.reduce(acc, v)
    }
}

/// `A · B` with both in CSC, run as `Cᵀ = Bᵀ Aᵀ` on CSR storage: kernel
/// row `i` is output column `i`, kernel `x` is `B(k, i)`, kernel `y` is
/// `A(j, k)`.
struct Swapped<'o, Map, Lam, Red, A, B>(&'o Ops<Map, Lam, Red>, PhantomData<fn(&A, &B)>);

impl<Map, Lam, Red, A, B> Visit<B, A> for Swapped<'_, Map, Lam, Red, A, B>
where
    Map: ActionMap<A, B>,
    Lam: Lambda<Map::Out, A, B>,
    Lam::Out: Copy + Default + Send + Sync,
    Red: Reduce<Lam::Out>,
{
    type State = Lam::State;
    type Out = Lam::Out;
    #[inline(always)]
    fn init(&self, i: u32) -> Self::State {
        self.0.lambda.init(i)
    }
    #[inline(always)]
    fn visit(&self, st: &mut Self::State, i: u32, j: u32, k: u32, b: &B, a: &A) -> Option<Self::Out> {
        let m = self.0.map.map(a, b);
        self.0.lambda.call(st, m, &Collision { i: j, j: i, k, a, b })
    }
    #[inline(always)]
    fn reduce(&self, acc: Self::Out, v: Self::Out) -> Self::Out {
        self.0.reduce.reduce(acc, v)
    }
}

/// Dense accumulator of one task: `stamp[j] == i + 1` marks columns touched
/// by row `i` (rows are unique per task, so stamps never need clearing).
struct Workspace<V> {
    stamp: Vec<u32>,
    acc: Vec<V>,
    touched: Vec<u32>,
}

impl<V: Copy + Default> Workspace<V> {
    fn new(ncols: usize, values: bool) -> Self {
        Workspace {
            stamp: vec![0; ncols],
            acc: if values { vec![V::default(); ncols] } else { Vec::new() },
            touched: Vec::new(),
        }
    }

    /// Runs the collisions of kernel row `i`; leaves the touched columns
    /// (unsorted) in `touched` and, if `VALUES`, their values in `acc`.
    #[inline]
    fn row<X, Y, Vi: Visit<X, Y, Out = V>, const VALUES: bool>(
        &mut self,
        i: usize,
        x: SparseRef<'_, X, Csr>,
        y: SparseRef<'_, Y, Csr>,
        v: &Vi,
    ) {
        let mark = i as u32 + 1;
        let mut st = v.init(i as u32);
        // Separate borrows, so that the loop keeps them in registers.
        let Workspace { stamp, acc, touched } = self;
        let (stamp, acc) = (stamp.as_mut_slice(), acc.as_mut_slice());
        touched.clear();
        let (xk, xv) = x.slice(i);
        let yptr = y.ptr();
        let yidx = y.indices();
        let yval = y.values();
        for (&k, a) in xk.iter().zip(xv) {
            let range = yptr[k as usize] as usize..yptr[k as usize + 1] as usize;
            for (&j, b) in yidx[range.clone()].iter().zip(&yval[range]) {
                if let Some(val) = v.visit(&mut st, i as u32, j, k, a, b) {
                    let ju = j as usize;
                    if stamp[ju] != mark {
                        stamp[ju] = mark;
                        touched.push(j);
                        if VALUES {
                            acc[ju] = val;
                        }
                    } else if VALUES {
                        acc[ju] = v.reduce(acc[ju], val);
                    }
                }
            }
        }
    }
}

fn blocks_for(x_ptr: &[u32], par: Par) -> Vec<Range<usize>> {
    let nnz = x_ptr.last().copied().unwrap_or(0) as usize;
    balanced_ranges(x_ptr, par.blocks(nnz + x_ptr.len(), 1 << 12))
}

fn kernel_symbolic<X: Sync, Y: Sync, Vi: Visit<X, Y>>(
    x: SparseRef<'_, X, Csr>,
    y: SparseRef<'_, Y, Csr>,
    v: &Vi,
    par: Par,
) -> Result<Pattern<Csr>> {
    let nrows = x.nrows();
    let ncols = y.ncols();
    let blocks = blocks_for(x.ptr(), par);
    let work = |r: Range<usize>| -> Result<(Vec<u32>, Vec<u32>)> {
        let mut ws = Workspace::<Vi::Out>::new(ncols, false);
        let mut counts = Vec::with_capacity(r.len());
        let mut idx = Vec::new();
        for i in r {
            ws.row::<X, Y, Vi, false>(i, x, y, v);
            ws.touched.sort_unstable();
            counts.push(ws.touched.len() as u32);
            crate::mem::try_reserve(&mut idx, ws.touched.len(), "the pattern of the product")?;
            idx.extend_from_slice(&ws.touched);
        }
        Ok((counts, idx))
    };
    let parts: Vec<(Vec<u32>, Vec<u32>)> = if blocks.len() <= 1 {
        vec![work(0..nrows)?]
    } else {
        blocks.into_par_iter().map(work).collect::<Result<_>>()?
    };
    let (ptr, idx) = assemble_pattern(nrows, parts.iter().map(|(c, i)| (c.as_slice(), i.as_slice())))?;
    // SAFETY: rows were sorted and deduplicated (stamps), columns < ncols.
    Ok(unsafe { Pattern::new_unchecked(nrows as u32, ncols as u32, ptr, idx) })
}

/// Concatenates per-block `(row counts, indices)` into `ptr`, `idx`.
fn assemble_pattern<'p>(
    nrows: usize,
    parts: impl Iterator<Item = (&'p [u32], &'p [u32])> + Clone,
) -> Result<(Vec<u32>, Vec<u32>)> {
    let total: usize = parts.clone().map(|(_, i)| i.len()).sum();
    to_u32(total, "nnz of the product")?;
    let mut ptr = Vec::with_capacity(nrows + 1);
    ptr.push(0u32);
    let mut acc = 0u32;
    let mut idx = crate::mem::try_vec_with_capacity(total, "the pattern of the product")?;
    for (counts, part_idx) in parts {
        for &c in counts {
            acc += c;
            ptr.push(acc);
        }
        idx.extend_from_slice(part_idx);
    }
    Ok((ptr, idx))
}

/// One block of consecutive output rows, computed by one task: the
/// offsets of its rows in its own arrays (`rows + 1` entries, from 0), the
/// rows' column indices (sorted) and values.
type Part<V> = (Vec<u32>, Vec<u32>, Vec<V>);

/// The row ranges of the tasks and the block each computed.
type Parts<V> = (Vec<Range<usize>>, Vec<Part<V>>);

/// `X · Y` in one pass, each block of rows into buffers of its own.
fn kernel_parts<X: Sync, Y: Sync, Vi: Visit<X, Y>>(
    x: SparseRef<'_, X, Csr>,
    y: SparseRef<'_, Y, Csr>,
    v: &Vi,
    par: Par,
) -> Result<Parts<Vi::Out>> {
    let nrows = x.nrows();
    let ncols = y.ncols();
    let mut blocks = blocks_for(x.ptr(), par);
    if blocks.is_empty() {
        blocks.push(0..nrows);
    }
    let work = |r: Range<usize>| -> Result<Part<Vi::Out>> {
        let mut ws = Workspace::<Vi::Out>::new(ncols, true);
        let mut ptr = Vec::with_capacity(r.len() + 1);
        ptr.push(0u32);
        let mut idx = Vec::new();
        let mut vals = Vec::new();
        for i in r {
            ws.row::<X, Y, Vi, true>(i, x, y, v);
            ws.touched.sort_unstable();
            crate::mem::try_reserve(&mut idx, ws.touched.len(), "indices of the product")?;
            crate::mem::try_reserve(&mut vals, ws.touched.len(), "values of the product")?;
            idx.extend_from_slice(&ws.touched);
            vals.extend(ws.touched.iter().map(|&j| ws.acc[j as usize]));
            ptr.push(to_u32(idx.len(), "nnz of the product")?);
        }
        Ok((ptr, idx, vals))
    };
    let parts: Vec<Part<Vi::Out>> = if blocks.len() <= 1 {
        vec![work(0..nrows)?]
    } else {
        blocks.clone().into_par_iter().map(work).collect::<Result<_>>()?
    };
    Ok((blocks, parts))
}

fn kernel_multiply<X: Sync, Y: Sync, Vi: Visit<X, Y>>(
    x: SparseRef<'_, X, Csr>,
    y: SparseRef<'_, Y, Csr>,
    v: &Vi,
    par: Par,
) -> Result<SparseMat<Vi::Out, Csr>> {
    let ncols = y.ncols();
    let (_, parts) = kernel_parts(x, y, v, par)?;
    assemble(x.nrows(), ncols, parts)
}

/// One matrix from the blocks of rows of [`kernel_parts`].
fn assemble<V: Copy + Default + Send + Sync>(
    nrows: usize,
    ncols: usize,
    mut parts: Vec<Part<V>>,
) -> Result<SparseMat<V, Csr>> {
    if parts.len() == 1 {
        let (ptr, idx, vals) = parts.pop().unwrap_or_default();
        // SAFETY: rows sorted and deduplicated (stamps), columns < ncols,
        // nnz checked against u32 while the rows were written.
        return Ok(unsafe { SparseMat::new_unchecked(nrows as u32, ncols as u32, ptr, idx, vals) });
    }
    let total: usize = parts.iter().map(|(_, i, _)| i.len()).sum();
    to_u32(total, "nnz of the product")?;
    let mut ptr = Vec::with_capacity(nrows + 1);
    ptr.push(0u32);
    let mut base = 0u32;
    for (p, i, _) in &parts {
        ptr.extend(p[1..].iter().map(|&o| base + o));
        base += i.len() as u32;
    }
    let idx = try_concat(&parts.iter().map(|(_, i, _)| i.as_slice()).collect::<Vec<_>>(), "indices of the product")?;
    let vals = try_concat(&parts.iter().map(|(_, _, v)| v.as_slice()).collect::<Vec<_>>(), "values of the product")?;
    // SAFETY: as above; the total was checked against u32.
    Ok(unsafe { SparseMat::new_unchecked(nrows as u32, ncols as u32, ptr, idx, vals) })
}

/// `X · Y` in two passes over the collisions: the first counts each row's
/// entries (stamps only), the second writes each row, sorted, straight into
/// its place in the product's arrays. The product is allocated once, at its
/// exact size, and no per-block buffers are kept.
fn kernel_two_pass<X: Sync, Y: Sync, Vi: Visit<X, Y>>(
    x: SparseRef<'_, X, Csr>,
    y: SparseRef<'_, Y, Csr>,
    v: &Vi,
    par: Par,
) -> Result<SparseMat<Vi::Out, Csr>> {
    let (nrows, ncols) = (x.nrows(), y.ncols());
    let blocks = blocks_for(x.ptr(), par);
    let seq = blocks.len() <= 1;
    let mut counts = vec![0u32; nrows];
    {
        let pieces = split_by_ranges(&mut counts, &blocks, 1);
        let count = |(r, dst): (Range<usize>, &mut [u32])| {
            let mut ws = Workspace::<Vi::Out>::new(ncols, false);
            for (i, c) in r.zip(dst) {
                ws.row::<X, Y, Vi, false>(i, x, y, v);
                *c = ws.touched.len() as u32;
            }
        };
        if seq {
            blocks.iter().cloned().zip(pieces).for_each(count);
        } else {
            blocks.clone().into_par_iter().zip(pieces).for_each(count);
        }
    }
    let mut ptr = Vec::with_capacity(nrows + 1);
    ptr.push(0u32);
    let mut total = 0u64;
    for &c in &counts {
        total += u64::from(c);
        ptr.push(to_u32(total as usize, "nnz of the product")?);
    }
    drop(counts);
    let mut idx = crate::mem::try_zeroed_vec::<u32>(total as usize, "indices of the product")?;
    let mut vals = crate::mem::try_filled_vec(total as usize, Vi::Out::default(), "values of the product")?;
    {
        let idx_pieces = split_by_ptr(&mut idx, &ptr, &blocks);
        let val_pieces = split_by_ptr(&mut vals, &ptr, &blocks);
        let ptr = &ptr;
        type Job<'a, V> = (Range<usize>, (&'a mut [u32], &'a mut [V]));
        let fill = |(r, (di, dv)): Job<'_, Vi::Out>| {
            let mut ws = Workspace::<Vi::Out>::new(ncols, true);
            let base = ptr[r.start] as usize;
            for i in r {
                ws.row::<X, Y, Vi, true>(i, x, y, v);
                ws.touched.sort_unstable();
                let at = ptr[i] as usize - base..ptr[i + 1] as usize - base;
                assert_eq!(at.len(), ws.touched.len(), "spgemm: row {i} gave a different pattern on its second pass");
                di[at.clone()].copy_from_slice(&ws.touched);
                for (slot, &j) in dv[at].iter_mut().zip(&ws.touched) {
                    *slot = ws.acc[j as usize];
                }
            }
        };
        let jobs = blocks.into_iter().zip(idx_pieces.into_iter().zip(val_pieces));
        if seq {
            jobs.for_each(fill);
        } else {
            jobs.collect::<Vec<_>>().into_par_iter().for_each(fill);
        }
    }
    // SAFETY: rows sorted and deduplicated (stamps), columns < ncols, `ptr`
    // from the counts (checked against u32).
    Ok(unsafe { SparseMat::new_unchecked(nrows as u32, ncols as u32, ptr, idx, vals) })
}

fn kernel_numeric<X: Sync, Y: Sync, Vi: Visit<X, Y>>(
    x: SparseRef<'_, X, Csr>,
    y: SparseRef<'_, Y, Csr>,
    v: &Vi,
    out: SparseMut<'_, Vi::Out, Csr>,
    par: Par,
) {
    let ncols = y.ncols();
    let (pattern, values) = out.into_parts();
    let blocks = blocks_for(pattern.ptr(), par);
    let value_ranges: Vec<Range<usize>> =
        blocks.iter().map(|r| pattern.ptr()[r.start] as usize..pattern.ptr()[r.end] as usize).collect();
    let work = |(r, dst): (Range<usize>, &mut [Vi::Out])| {
        let mut ws = Workspace::<Vi::Out>::new(ncols, true);
        let base = pattern.ptr()[r.start] as usize;
        for i in r {
            ws.row::<X, Y, Vi, true>(i, x, y, v);
            let cols = pattern.slice(i);
            let mark = i as u32 + 1;
            assert!(
                cols.len() == ws.touched.len() && cols.iter().all(|&j| ws.stamp[j as usize] == mark),
                "spgemm numeric: the output pattern of row {i} does not match the product \
                 (expected {} entries, the pattern has {}); pass the pattern from `symbolic` with the same operands and ops",
                ws.touched.len(),
                cols.len()
            );
            let start = pattern.ptr()[i] as usize - base;
            for (slot, &j) in dst[start..start + cols.len()].iter_mut().zip(cols) {
                *slot = ws.acc[j as usize];
            }
        }
    };
    let pieces = {
        let mut rest: &mut [Vi::Out] = values;
        let mut pieces = Vec::with_capacity(value_ranges.len());
        for r in &value_ranges {
            let (head, tail) = rest.split_at_mut(r.len());
            pieces.push(head);
            rest = tail;
        }
        pieces
    };
    if blocks.len() <= 1 {
        blocks.into_iter().zip(pieces).for_each(work);
    } else {
        blocks.into_par_iter().zip(pieces).for_each(work);
    }
}

// ---------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------

fn as_csr_mut<T, L: Layout>(a: SparseMut<'_, T, L>) -> SparseMut<'_, T, Csr> {
    let (p, vals) = a.into_parts();
    let (nr, nc) = p.dims_u32();
    // SAFETY: as for `SparseRef::relabel`: same valid arrays, named for the
    // layout they are valid in.
    unsafe { PatternRef::<Csr>::new_unchecked(nr, nc, p.ptr(), p.indices()) }.with_values_mut(vals)
}

fn recast<V, L1: Layout, L2: Layout>(m: SparseMat<V, L1>) -> SparseMat<V, L2> {
    let (nr, nc, ptr, idx, vals) = m.into_parts();
    // SAFETY: same valid arrays under the layout marker they were built for.
    unsafe { SparseMat::new_unchecked(nr, nc, ptr, idx, vals) }
}

#[track_caller]
fn check_inner(a: (usize, usize), b: (usize, usize)) {
    assert_eq!(a.1, b.0, "spgemm: A is {} x {} and B is {} x {}: A.ncols() must equal B.nrows()", a.0, a.1, b.0, b.1);
}

/// Pattern of `C = A B {μ}[λ]`: the entries for which at least one collision
/// contributes (Mlakar et al. 2020, §3.1; symbolic phase).
///
/// # Errors
/// [`AlgebraError::TooLarge`](crate::AlgebraError::TooLarge) if the product
/// has more than `u32::MAX` entries.
#[track_caller]
pub fn symbolic<A, B, Map, Lam, Red, L>(
    a: SparseRef<'_, A, L>,
    b: SparseRef<'_, B, L>,
    ops: &Ops<Map, Lam, Red>,
    par: Par,
) -> Result<Pattern<L>>
where
    A: Sync,
    B: Sync,
    L: Layout,
    Map: ActionMap<A, B>,
    Lam: Lambda<Map::Out, A, B>,
    Lam::Out: Copy + Default + Send + Sync,
    Red: Reduce<Lam::Out>,
{
    check_inner(a.shape(), b.shape());
    if L::COLUMN_MAJOR {
        let p = kernel_symbolic(
            b.transpose().relabel::<Csr>(),
            a.transpose().relabel::<Csr>(),
            &Swapped(ops, PhantomData),
            par,
        )?;
        let (nr, nc, ptr, idx) = p.into_transpose().into_parts();
        // SAFETY: the CSR pattern of Cᵀ is the CSC pattern of C.
        Ok(unsafe { Pattern::new_unchecked(nr, nc, ptr, idx) })
    } else {
        let p = kernel_symbolic(a.relabel::<Csr>(), b.relabel::<Csr>(), &Straight(ops, PhantomData), par)?;
        let (nr, nc, ptr, idx) = p.into_parts();
        // SAFETY: L = Csr here.
        Ok(unsafe { Pattern::new_unchecked(nr, nc, ptr, idx) })
    }
}

/// Values of `C = A B {μ}[λ]` written into `out`, whose pattern must be the
/// one [`symbolic`] returns for the same operands and ops (numeric phase).
///
/// # Panics
/// If the shapes disagree or `out`'s pattern is not the product's.
#[track_caller]
pub fn numeric<A, B, Map, Lam, Red, L>(
    a: SparseRef<'_, A, L>,
    b: SparseRef<'_, B, L>,
    ops: &Ops<Map, Lam, Red>,
    out: SparseMut<'_, Lam::Out, L>,
    par: Par,
) where
    A: Sync,
    B: Sync,
    L: Layout,
    Map: ActionMap<A, B>,
    Lam: Lambda<Map::Out, A, B>,
    Lam::Out: Copy + Default + Send + Sync,
    Red: Reduce<Lam::Out>,
{
    check_inner(a.shape(), b.shape());
    let out_shape = out.pattern().shape();
    assert_eq!(
        out_shape,
        (a.nrows(), b.ncols()),
        "spgemm numeric: output is {} x {} but A B is {} x {}",
        out_shape.0,
        out_shape.1,
        a.nrows(),
        b.ncols()
    );
    if L::COLUMN_MAJOR {
        let (p, vals) = out.into_parts();
        let out_t = p.transpose().with_values_mut(vals);
        kernel_numeric(
            b.transpose().relabel::<Csr>(),
            a.transpose().relabel::<Csr>(),
            &Swapped(ops, PhantomData),
            as_csr_mut(out_t),
            par,
        );
    } else {
        kernel_numeric(a.relabel::<Csr>(), b.relabel::<Csr>(), &Straight(ops, PhantomData), as_csr_mut(out), par);
    }
}

/// `C = A B {μ}[λ]` in one pass (symbolic and numeric together).
///
/// ```
/// use subla_algebra::{CsrMat, Par, spgemm::{self, Ops}};
/// let a = CsrMat::try_new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1i64, 2, 3])?;
/// // Plain product.
/// let c = spgemm::multiply(a.as_ref(), a.as_ref(), &Ops::product(), Par::Seq)?;
/// assert_eq!(c.values(), &[1, 8, 9]);
/// // Keep only collisions through k = 1, and take the maximum instead of the sum.
/// let ops = Ops::new(|x: &i64, y: &i64| x * y, |m, c| (c.k == 1).then_some(m)).reduce(|p: i64, q: i64| p.max(q));
/// let d = spgemm::multiply(a.as_ref(), a.as_ref(), &ops, Par::Seq)?;
/// assert_eq!((d.indices(), d.values()), (&[1u32, 1][..], &[6i64, 9][..]));
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
///
/// # Errors
/// [`AlgebraError::TooLarge`](crate::AlgebraError::TooLarge) if the product
/// has more than `u32::MAX` entries.
#[track_caller]
pub fn multiply<A, B, Map, Lam, Red, L>(
    a: SparseRef<'_, A, L>,
    b: SparseRef<'_, B, L>,
    ops: &Ops<Map, Lam, Red>,
    par: Par,
) -> Result<SparseMat<Lam::Out, L>>
where
    A: Sync,
    B: Sync,
    L: Layout,
    Map: ActionMap<A, B>,
    Lam: Lambda<Map::Out, A, B>,
    Lam::Out: Copy + Default + Send + Sync,
    Red: Reduce<Lam::Out>,
{
    check_inner(a.shape(), b.shape());
    if L::COLUMN_MAJOR {
        let c = kernel_multiply(
            b.transpose().relabel::<Csr>(),
            a.transpose().relabel::<Csr>(),
            &Swapped(ops, PhantomData),
            par,
        )?;
        Ok(recast(c.into_transpose()))
    } else {
        let c = kernel_multiply(a.relabel::<Csr>(), b.relabel::<Csr>(), &Straight(ops, PhantomData), par)?;
        Ok(recast(c))
    }
}

/// The plain product `C = A B` (`μ = a * b`, `⊕ = +`): the same values as
/// [`multiply`] with [`Ops::product`], bit for bit, computed in two passes
/// over the collisions (a count, then the values written straight into
/// place). It allocates the product once at its exact size, with no
/// intermediate buffers: about half the peak memory of [`multiply`], and
/// faster when the product is large.
///
/// ```
/// use subla_algebra::{CsrMat, Par, spgemm::{self, Ops}};
/// let a = CsrMat::try_new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0])?;
/// let c = spgemm::product(a.as_ref(), a.as_ref(), Par::Seq)?;
/// assert_eq!(c.values(), &[1.0, 8.0, 9.0]);
/// assert_eq!(c, spgemm::multiply(a.as_ref(), a.as_ref(), &Ops::product(), Par::Seq)?);
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
///
/// # Errors
/// [`AlgebraError::TooLarge`](crate::AlgebraError::TooLarge) if the product
/// has more than `u32::MAX` entries.
///
/// # Panics
/// If `A.ncols() != B.nrows()`.
#[track_caller]
pub fn product<T, L>(a: SparseRef<'_, T, L>, b: SparseRef<'_, T, L>, par: Par) -> Result<SparseMat<T, L>>
where
    T: Copy + Default + Send + Sync + Mul<Output = T> + Add<Output = T>,
    L: Layout,
{
    check_inner(a.shape(), b.shape());
    let ops = Ops::product();
    if L::COLUMN_MAJOR {
        let c = kernel_two_pass(
            b.transpose().relabel::<Csr>(),
            a.transpose().relabel::<Csr>(),
            &Swapped(&ops, PhantomData),
            par,
        )?;
        Ok(recast(c.into_transpose()))
    } else {
        let c = kernel_two_pass(a.relabel::<Csr>(), b.relabel::<Csr>(), &Straight(&ops, PhantomData), par)?;
        Ok(recast(c))
    }
}

/// The rows of a plain CSR product, computed block by block into buffers
/// of their own and not gathered into one matrix: from [`product_rows`].
///
/// For a caller that copies the rows somewhere else anyway (into a larger
/// matrix, interleaved with other rows), this saves [`product`]'s counting
/// pass over the collisions without adding a copy. [`ProductRows::row`]
/// reads any row; [`ProductRows::into_matrix`] gathers them into a matrix
/// (what [`multiply`] does).
#[derive(Clone, Debug)]
pub struct ProductRows<T> {
    nrows: usize,
    ncols: usize,
    /// First row of each block (ascending, from 0).
    starts: Vec<usize>,
    parts: Vec<Part<T>>,
}

impl<T: Copy + Default + Send + Sync> ProductRows<T> {
    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> u64 {
        self.parts.iter().map(|(_, i, _)| i.len() as u64).sum()
    }

    /// Row `i`: its column indices (ascending) and values.
    ///
    /// # Panics
    /// If `i >= nrows`.
    #[inline]
    pub fn row(&self, i: usize) -> (&[u32], &[T]) {
        assert!(i < self.nrows, "ProductRows::row: row {i} out of range ({} rows)", self.nrows);
        let b = self.starts.partition_point(|&s| s <= i) - 1;
        let (ptr, idx, vals) = &self.parts[b];
        let k = i - self.starts[b];
        let r = ptr[k] as usize..ptr[k + 1] as usize;
        (&idx[r.clone()], &vals[r])
    }

    /// The rows as one CSR matrix (the blocks copied into place, in
    /// parallel).
    ///
    /// # Errors
    /// [`AlgebraError::TooLarge`](crate::AlgebraError::TooLarge) if there
    /// are more than `u32::MAX` entries in all.
    pub fn into_matrix(self) -> Result<SparseMat<T, Csr>> {
        assemble(self.nrows, self.ncols, self.parts)
    }
}

/// The rows of the plain product `C = A B` (CSR), in one pass over the
/// collisions, left in per-task blocks (see [`ProductRows`]): each row
/// is bit for bit the row of [`product`] and [`multiply`] with
/// [`Ops::product`], for every [`Par`].
///
/// ```
/// use subla_algebra::{CsrMat, Par, spgemm};
/// let a = CsrMat::try_new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0])?;
/// let rows = spgemm::product_rows(a.as_ref(), a.as_ref(), Par::Seq)?;
/// assert_eq!(rows.row(0), (&[0u32, 1][..], &[1.0, 8.0][..]));
/// assert_eq!(rows.into_matrix()?, spgemm::product(a.as_ref(), a.as_ref(), Par::Seq)?);
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
///
/// # Errors
/// [`AlgebraError::TooLarge`](crate::AlgebraError::TooLarge) if one task's
/// block has more than `u32::MAX` entries.
///
/// # Panics
/// If `A.ncols() != B.nrows()`.
#[track_caller]
pub fn product_rows<T>(a: SparseRef<'_, T, Csr>, b: SparseRef<'_, T, Csr>, par: Par) -> Result<ProductRows<T>>
where
    T: Copy + Default + Send + Sync + Mul<Output = T> + Add<Output = T>,
{
    check_inner(a.shape(), b.shape());
    let ops = Ops::product();
    let (blocks, parts) = kernel_parts(a, b, &Straight(&ops, PhantomData), par)?;
    Ok(ProductRows { nrows: a.nrows(), ncols: b.ncols(), starts: blocks.iter().map(|r| r.start).collect(), parts })
}

/// Pattern of the plain product `A B` (every collision counts), from the
/// patterns alone.
///
/// # Errors
/// [`AlgebraError::TooLarge`](crate::AlgebraError::TooLarge) if the product
/// has more than `u32::MAX` entries.
#[track_caller]
pub fn structure<L: Layout>(a: PatternRef<'_, L>, b: PatternRef<'_, L>, par: Par) -> Result<Pattern<L>> {
    let ua = vec![(); a.nnz()];
    let ub = vec![(); b.nnz()];
    let ops = Ops::mapped(|_: &(), _: &()| ()).reduce(|(), ()| ());
    symbolic(a.with_values(&ua), b.with_values(&ub), &ops, par)
}

/// Bounds `(lower, upper)` of the nonzeros of `A B`, from the operands'
/// slice lengths alone (one pass over `A`'s indices, no stamp array): each
/// output major slice holds at least as many entries as the longest slice
/// of the other operand it reads, and at most their sum. Where the lower
/// bound is already over a budget, the product can be refused without
/// [`product_nnz`]'s exact count; where the upper bound fits, the count is
/// not needed. Sums saturate at `u64::MAX`.
///
/// ```
/// use subla_algebra::{CsrPattern, Par, spgemm};
/// let a = CsrPattern::try_new(2, 2, vec![0, 2, 3], vec![0, 1, 1])?;
/// // Row 0 reads rows 0 (2 entries) and 1 (1 entry); row 1 reads row 1.
/// assert_eq!(spgemm::product_nnz_bounds(a.as_ref(), a.as_ref(), Par::Seq), (3, 4));
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
///
/// # Panics
/// If `A.ncols() != B.nrows()`.
#[track_caller]
pub fn product_nnz_bounds<L: Layout>(a: PatternRef<'_, L>, b: PatternRef<'_, L>, par: Par) -> (u64, u64) {
    check_inner(a.shape(), b.shape());
    let (x, y) = if L::COLUMN_MAJOR { (b, a) } else { (a, b) };
    let (xptr, xidx, yptr) = (x.ptr(), x.indices(), y.ptr());
    let slice = |i: usize| -> (u64, u64) {
        let lens = xidx[xptr[i] as usize..xptr[i + 1] as usize]
            .iter()
            .map(|&k| u64::from(yptr[k as usize + 1] - yptr[k as usize]));
        lens.fold((0, 0), |(lo, hi), n| (lo.max(n), hi.saturating_add(n)))
    };
    let add = |p: (u64, u64), q: (u64, u64)| (p.0.saturating_add(q.0), p.1.saturating_add(q.1));
    let n = x.major_dim();
    match par {
        Par::Rayon => (0..n).into_par_iter().with_min_len(1 << 14).map(slice).reduce(|| (0, 0), add),
        Par::Seq => (0..n).map(slice).fold((0, 0), add),
    }
}

/// Exact number of nonzeros of the plain product `A B` (every collision
/// counts, as in [`structure`]), from the patterns alone and without building
/// the product: use it to predict the size of a product (or to check it
/// against a budget) before computing it.
///
/// Each task counts a block of output major slices with its own stamp array
/// (`O(minor dimension)` memory per task); no index array is allocated.
/// Counts are integers, so the result does not depend on [`Par`].
///
/// ```
/// use subla_algebra::{CsrPattern, Par, spgemm};
/// let a = CsrPattern::try_new(2, 2, vec![0, 2, 3], vec![0, 1, 1])?;
/// assert_eq!(spgemm::product_nnz(a.as_ref(), a.as_ref(), Par::Seq), 3);
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
///
/// # Panics
/// If `A.ncols() != B.nrows()`.
#[track_caller]
pub fn product_nnz<L: Layout>(a: PatternRef<'_, L>, b: PatternRef<'_, L>, par: Par) -> u64 {
    check_inner(a.shape(), b.shape());
    // In kernel orientation (CSR × CSR): a CSC product is counted as
    // `Cᵀ = Bᵀ Aᵀ`, whose CSR storage is the operands' CSC storage.
    let (x, y) = if L::COLUMN_MAJOR { (b, a) } else { (a, b) };
    let (xptr, xidx) = (x.ptr(), x.indices());
    let (yptr, yidx) = (y.ptr(), y.indices());
    let width = y.minor_dim();
    let count = |r: Range<usize>| -> u64 {
        // `stamp[j] == i + 1` marks columns already counted in kernel row
        // `i`; rows are unique per task, so stamps never need clearing.
        let mut stamp = vec![0u32; width];
        let mut total = 0u64;
        for i in r {
            let mark = i as u32 + 1;
            for &k in &xidx[xptr[i] as usize..xptr[i + 1] as usize] {
                for &j in &yidx[yptr[k as usize] as usize..yptr[k as usize + 1] as usize] {
                    let seen = &mut stamp[j as usize];
                    if *seen != mark {
                        *seen = mark;
                        total += 1;
                    }
                }
            }
        }
        total
    };
    let blocks = blocks_for(xptr, par);
    if blocks.len() <= 1 { count(0..x.major_dim()) } else { blocks.into_par_iter().map(count).sum() }
}
