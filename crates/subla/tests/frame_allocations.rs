//! Per-frame evaluation of static topology allocates nothing: with its
//! scratch made once, `Evaluator::apply_with_scratch` runs frame after
//! frame without a call to the allocator, on every path (chain, composed
//! matrix, tensor and separable forms, `Auto`), in `f32` and `f64`, for 3
//! and 4 channels, under `Par::Seq` and `Par::Rayon`, into contiguous and
//! strided output; and it gives `Evaluator::apply`'s bits.
//!
//! The global allocator here counts every allocation from every thread
//! (rayon's workers included) while a frame runs, so this test has its own
//! `main` (no test harness, whose threads could allocate meanwhile).
//!
//! Under `Par::Rayon`, a call from inside the pool (`ThreadPool::install`)
//! must allocate nothing at all. A call from a thread outside the pool
//! hands each parallel section to the pool through rayon's injector queue,
//! which allocates one block of slots every 63 jobs injected: there the
//! count is held to that bound, which one allocation per frame would break.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ndarray::{Array2, ArrayView2, ArrayViewMut2, s};
use num_traits::Float;
use subla::mesh::MeshBuilder;
use subla::scheme::refinement::{Budget, Evaluation, Evaluator, Refinement};
use subla::{CatmarkSlak, Mesh, Par, Refiner};

/// The system allocator, counting allocations while [`COUNTING`] is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static LAST_SIZE: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn count(layout: Layout) {
        if COUNTING.load(Ordering::SeqCst) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
            LAST_SIZE.store(layout.size(), Ordering::SeqCst);
        }
    }
}

// SAFETY: every call is forwarded to `System` unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count(layout);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count(layout);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count(layout);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations (from all threads) while `f` runs.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

/// Frames run per case; the first is not counted.
const FRAMES: usize = 6;

/// An `m × n` quad torus: every vertex regular, so every row of the
/// composed matrix has the tensor-product form.
fn torus(m: u32, n: u32) -> Mesh {
    let id = |i: u32, j: u32| (i % m) * n + j % n;
    let faces: Vec<[u32; 4]> =
        (0..m).flat_map(|i| (0..n).map(move |j| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)])).collect();
    MeshBuilder::from_faces((m * n) as usize, &faces).build(Par::Rayon).expect("the torus is a valid mesh")
}

/// A cube of `k × k` quads a side with its top left open: valence-3
/// corners and a boundary, so some rows have no tensor-product form.
fn open_box(k: u32) -> Mesh {
    let k = k as i32;
    let mut ids = std::collections::HashMap::new();
    let mut faces = Vec::new();
    for axis in 0..3 {
        for side in [0, k] {
            if axis == 2 && side == k {
                continue;
            }
            let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
            for u in 0..k {
                for v in 0..k {
                    let mut quad = [(0, 0), (1, 0), (1, 1), (0, 1)].map(|(du, dv)| {
                        let mut p = [0i32; 3];
                        p[axis] = side;
                        p[a] = u + du;
                        p[b] = v + dv;
                        p
                    });
                    // Outward normals: the far side turns one way, the near
                    // side the other.
                    if side == 0 {
                        quad.reverse();
                    }
                    faces.push(quad.map(|p| {
                        let next = ids.len() as u32;
                        *ids.entry(p).or_insert(next)
                    }));
                }
            }
        }
    }
    MeshBuilder::from_faces(ids.len(), &faces).build(Par::Rayon).expect("the open box is a valid mesh")
}

/// Frame `frame`'s control data, written in place.
fn move_points<T: Float>(x: &mut Array2<T>, frame: usize) {
    let phase = frame as f64 * 0.37;
    for ((i, c), v) in x.indexed_iter_mut() {
        *v = T::from(((i * 5 + c) as f64 * 0.731 + phase).sin() * 2.0).unwrap_or_else(T::nan);
    }
}

fn same_bits<T: Float>(a: ArrayView2<'_, T>, b: ArrayView2<'_, T>) -> bool {
    a.dim() == b.dim() && a.iter().zip(b.iter()).all(|(p, q)| p.integer_decode() == q.integer_decode())
}

/// Where a case's frames run.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Threads {
    /// `Par::Seq` on the main thread.
    Seq,
    /// `Par::Rayon` inside `ThreadPool::install` of a 3-thread pool.
    InPool,
    /// `Par::Rayon` from the main thread, outside every pool.
    Outside,
}

/// Runs [`FRAMES`] frames of `ev` through `apply_with_scratch` with one
/// scratch and one output (its first three columns of four if `strided`),
/// checks each against `apply`, and returns the allocations of all frames
/// but the first.
fn frames<T: Float + Send + Sync + 'static>(ev: &Evaluator<T>, d: usize, strided: bool, par: Par) -> usize {
    let mut x = Array2::<T>::zeros((ev.input_len(), d));
    let mut out = Array2::<T>::zeros((ev.output_len(), if strided { d + 1 } else { d }));
    let copies = if strided { ev.output_len() * d } else { 0 };
    let mut scratch = vec![T::nan(); ev.scratch_len(d) + copies];
    let mut want = Array2::<T>::zeros((ev.output_len(), d));
    let mut counted = 0;
    for frame in 0..FRAMES {
        move_points(&mut x, frame);
        // The reference, outside the count.
        ev.apply(x.view(), want.view_mut(), par);
        let mut view: ArrayViewMut2<'_, T> = if strided { out.slice_mut(s![.., ..d]) } else { out.view_mut() };
        let n = allocations_in(|| ev.apply_with_scratch(x.view(), view.view_mut(), &mut scratch, par));
        if frame > 0 {
            counted += n;
        }
        assert!(same_bits(view.view(), want.view()), "frame {frame}: apply_with_scratch and apply differ");
    }
    counted
}

/// Runs every case of `r` for one element type; returns the cases run.
fn cases<T: Float + Send + Sync + 'static>(name: &str, r: &mut Refinement, pool: &rayon::ThreadPool) -> usize {
    let mut run = 0;
    let hows = [Evaluation::Chain, Evaluation::Composed, Evaluation::Tensor, Evaluation::Separable, Evaluation::Auto];
    for how in hows {
        for d in [3, 4] {
            let ev = r
                .evaluator::<T>(how, d, Budget::UNLIMITED, Par::Rayon)
                .unwrap_or_else(|e| panic!("{name}: {how:?} evaluator: {e}"));
            for strided in [false, true] {
                for threads in [Threads::Seq, Threads::InPool, Threads::Outside] {
                    let what = format!(
                        "{name}, {how:?}, {}, {d} channels, {}, {threads:?}",
                        std::any::type_name::<T>(),
                        if strided { "strided output" } else { "contiguous output" },
                    );
                    let n = match threads {
                        Threads::Seq => frames(&ev, d, strided, Par::Seq),
                        Threads::InPool => pool.install(|| frames(&ev, d, strided, Par::Rayon)),
                        Threads::Outside => frames(&ev, d, strided, Par::Rayon),
                    };
                    // Outside the pool, rayon's injector allocates one block
                    // (1520 bytes) per 63 jobs injected: one per parallel
                    // section (a matrix, or the tensor form's two), of
                    // these frames and of the reference's between them.
                    let allowed = match threads {
                        Threads::Outside => {
                            let sections = ev.num_matrices() + usize::from(ev.is_tensor());
                            (2 * FRAMES * sections).div_ceil(63)
                        }
                        _ => 0,
                    };
                    assert!(
                        n <= allowed,
                        "{what}: {n} allocations in {} frames after the first (at most {allowed} allowed; the last \
                         of {} bytes)",
                        FRAMES - 1,
                        LAST_SIZE.load(Ordering::SeqCst)
                    );
                    run += 1;
                }
            }
        }
    }
    run
}

fn main() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool of 3 threads");
    let mut run = 0;
    // Large enough that `Par::Rayon` cuts every kernel into several blocks.
    for (name, mesh) in [("torus", torus(16, 16)), ("open box", open_box(4))] {
        let plan = CatmarkSlak.build(&mesh, 3, Par::Rayon).expect("the plan");
        let mut r = Refinement::chain(&plan, Budget::UNLIMITED, Par::Rayon).expect("the chain");
        r.compose_with(&plan, Budget::UNLIMITED, Par::Rayon).expect("the composed matrix");
        let tensor = r.tensor_rows().expect("Catmull-Clark has rows in tensor form");
        let open = tensor.nrows() - tensor.closed_rows();
        assert_eq!(open > 0, name == "open box", "{name}: rows without the tensor form");
        run += cases::<f64>(name, &mut r, &pool);
        run += cases::<f32>(name, &mut r, &pool);
    }
    println!("frame_allocations: {run} cases, no allocation after the first frame");
}
