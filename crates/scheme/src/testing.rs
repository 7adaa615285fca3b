//! Generic checks of the [`Plan`] contract, for the test
//! suites of implementations (feature `testing`).

use ndarray::Array2;
use subla_algebra::Par;
use subla_algebra::spmv::spmv_csr;
use subla_mesh::Mesh;

use crate::refinement::{Budget, Evaluation, Refinement};
use crate::{ChildPoint, DynRefiner, Faces, Plan, Real, Refiner, SchemeError, modeling};

/// [`crate::eval`], panicking with the scheme's name on an error (the
/// checks run CPU plans, and GPU plans without a failing device).
fn eval<T: Real, P: Plan + ?Sized>(plan: &P, x: ndarray::ArrayView2<'_, T>, par: Par) -> Array2<T> {
    crate::eval(plan, x, par).unwrap_or_else(|e| panic!("{}: eval failed: {e}", plan.name()))
}

/// Deterministic pseudo-random control data (`n × d`).
pub fn control_data(n: usize, d: usize, seed: u64) -> Array2<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array2::from_shape_fn((n, d), |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    })
}

/// Runs `f` inside a rayon pool of `threads` threads.
///
/// # Panics
/// If the pool cannot be built.
pub fn with_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p.install(f),
        Err(e) => panic!("cannot build a pool of {threads} threads: {e}"),
    }
}

/// Checks the whole contract of the [crate docs](crate) on one mesh:
/// lengths, eval into a used buffer (bit for bit), linearity against the
/// operators (`tol` relative to the data scale), row sums, determinism
/// over thread counts, f32 agreement, and modeling = static.
///
/// # Panics
/// With a message naming the broken clause.
pub fn check_contract<R: Refiner<Input = Mesh> + ?Sized>(refiner: &R, mesh: &Mesh, levels: u32, tol: f64) {
    check_contract_of(refiner, mesh, mesh.num_vertices(), levels, tol);
}

/// [`check_contract`] for a refiner of any input (a volumetric mesh, say):
/// `input_len` the number of control points `input` has.
///
/// # Panics
/// With a message naming the broken clause.
pub fn check_contract_of<R: Refiner + ?Sized>(refiner: &R, mesh: &R::Input, input_len: usize, levels: u32, tol: f64) {
    let name = refiner.name();
    let plan = refiner.build(mesh, levels, Par::Rayon).unwrap_or_else(|e| panic!("{name}: build failed: {e}"));
    assert_eq!(plan.levels(), levels, "{name}: levels");
    assert_eq!(plan.input_len(), input_len, "{name}: input_len");
    let x = control_data(plan.input_len(), 3, 7);
    let y = eval(&plan, x.view(), Par::Rayon);
    assert_eq!(y.nrows(), plan.output_len(), "{name}: output rows");
    // `out` is written, never accumulated into: a buffer holding anything
    // (a caller's reused output, here NaN) ends with eval's bits.
    let mut reused = Array2::from_elem(y.dim(), f64::NAN);
    plan.eval_f64(x.view(), reused.view_mut(), Par::Rayon)
        .unwrap_or_else(|e| panic!("{name}: eval into a used buffer: {e}"));
    if let Some(i) = y.iter().zip(&reused).position(|(a, b)| a.to_bits() != b.to_bits()) {
        panic!(
            "{name}: eval into a used buffer differs at value {i}: {} against {}",
            reused.as_slice().map_or(f64::NAN, |r| r[i]),
            y.iter().nth(i).copied().unwrap_or(f64::NAN)
        );
    }
    // Linearity: the chain of operators gives the same result.
    let mut z = x.clone();
    for l in 0..levels {
        let r = plan.operator(l, Par::Rayon).unwrap_or_else(|e| panic!("{name}: operator({l}): {e}"));
        assert_eq!(r.shape(), (plan.level_len(l + 1), plan.level_len(l)), "{name}: operator({l}) shape");
        for i in 0..r.nrows() {
            let s: f64 = r.row(i).1.iter().sum();
            assert!((s - 1.0).abs() < 1e-12, "{name}: row {i} of R_{l} sums to {s}");
        }
        z = spmv_csr(r.as_ref(), z.view(), |&v, _, _| v, Par::Rayon);
    }
    let scale = x.iter().fold(0f64, |m, v| m.max(v.abs())).max(1.0);
    // Evaluating `r` through `how` agrees with eval.
    let agrees = |r: &mut Refinement, how: Evaluation, what: &str| {
        let ev = r
            .evaluator::<f64>(how, 3, Budget::UNLIMITED, Par::Rayon)
            .unwrap_or_else(|e| panic!("{name}: {what}: {how:?} evaluator: {e}"));
        let mut out = Array2::zeros(y.dim());
        ev.apply(x.view(), out.view_mut(), Par::Rayon);
        let diff = out.iter().zip(y.iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff <= tol * scale, "{name}: {what}: the {how:?} evaluator and eval differ by {diff}");
    };
    check_child_points(&plan);
    // The bound on the operators' nonzeros holds.
    for l in 0..levels {
        if let Some(bound) = plan.operator_bound(l) {
            let nnz = plan.operator(l, Par::Seq).map_or(0, |r| r.nnz() as u64);
            assert!(nnz <= bound, "{name}: R_{l} has {nnz} nonzeros, over the predicted bound {bound}");
        }
    }
    // The composed matrix equals the chain, rows sum to 1, and a tiny
    // budget is refused with an error, not a panic.
    let mut refinement = Refinement::chain(&plan, Budget::UNLIMITED, Par::Rayon)
        .unwrap_or_else(|e| panic!("{name}: refinement matrices: {e}"));
    let composed = refinement.compose(Budget::UNLIMITED, Par::Rayon).unwrap_or_else(|e| panic!("{name}: compose: {e}"));
    for i in 0..composed.nrows() {
        let s: f64 = composed.row(i).1.iter().sum();
        assert!((s - 1.0).abs() < 1e-12, "{name}: row {i} of the composed R sums to {s}");
    }
    let w = spmv_csr(composed.as_ref(), x.view(), |&v, _, _| v, Par::Rayon);
    let diff = w.iter().zip(z.iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff <= tol * scale, "{name}: composed R and the chain differ by {diff}");
    // The rows the scheme writes in closed form, the rows of the per-level
    // matrices it multiplies, and the composed matrix built without the
    // chain: all the same matrix.
    let same = |other: &subla_algebra::CsrMat<f64>, how: &str| {
        assert_eq!(other.ptr(), composed.ptr(), "{name}: {how}: row lengths differ from the product's");
        assert_eq!(other.indices(), composed.indices(), "{name}: {how}: columns differ from the product's");
        for (k, (a, b)) in other.values().iter().zip(composed.values()).enumerate() {
            assert!((a - b).abs() <= 1e-14, "{name}: {how}: entry {k} is {a}, the product's {b}");
        }
    };
    let mut with_plan = Refinement::chain(&plan, Budget::UNLIMITED, Par::Rayon)
        .unwrap_or_else(|e| panic!("{name}: refinement matrices: {e}"));
    same(with_plan.compose_with(&plan, Budget::UNLIMITED, Par::Rayon).unwrap(), "compose_with");
    let alone = Refinement::composed_of(&plan, Budget::UNLIMITED, Par::Rayon)
        .unwrap_or_else(|e| panic!("{name}: composed_of: {e}"));
    same(alone.composed().unwrap(), "composed_of");
    assert!(alone.levels().is_empty(), "{name}: composed_of keeps no chain");
    let chain_eval = alone.clone().evaluator::<f64>(Evaluation::Chain, 3, Budget::UNLIMITED, Par::Rayon);
    assert_eq!(chain_eval.is_err(), levels > 0, "{name}: no chain to evaluate");
    agrees(&mut alone.clone(), Evaluation::Auto, "composed_of");
    // Rows kept in tensor-product form evaluate to the composed matrix's
    // bits, in both precisions and for any channel count.
    check_tensor(name, &alone, &x);
    check_tensor(name, &with_plan, &x);
    // The same product with the tensor rows kept apart: the same count,
    // the same matrix once merged, the same evaluations.
    let parts = Refinement::tensor_of(&plan, Budget::UNLIMITED, Par::Rayon)
        .unwrap_or_else(|e| panic!("{name}: tensor_of: {e}"));
    assert!(parts.levels().is_empty(), "{name}: tensor_of keeps no chain");
    assert_eq!(parts.composed_nnz(), Some(composed.nnz() as u64), "{name}: tensor_of's nonzeros");
    let kept_apart = parts.tensor_rows().is_some_and(|t| t.closed_rows() > 0) && levels > 0;
    assert_eq!(parts.composed().is_none(), kept_apart, "{name}: tensor_of builds the matrix only without tensor rows");
    check_tensor(name, &parts, &x);
    let mut merged = parts.clone();
    same(merged.compose(Budget::UNLIMITED, Par::Rayon).unwrap(), "tensor_of, then compose");
    assert!(
        parts.clone().evaluator::<f64>(Evaluation::Chain, 3, Budget::UNLIMITED, Par::Rayon).is_err() == (levels > 0),
        "{name}: tensor_of: no chain to evaluate"
    );
    for how in [Evaluation::Auto, Evaluation::Composed] {
        agrees(&mut parts.clone(), how, "tensor_of");
    }
    if levels > 0 {
        assert!(
            parts.clone().with_limit(&plan, Budget::UNLIMITED, Par::Rayon).is_err(),
            "{name}: no chain to append the limit operator to"
        );
    }
    for l in 0..levels {
        let r = plan.operator(l, Par::Rayon).unwrap();
        let rows: Vec<u32> = (0..r.nrows() as u32).rev().step_by(3).collect();
        let sub = plan.operator_rows(l, &rows, Par::Rayon).unwrap_or_else(|e| panic!("{name}: operator_rows: {e}"));
        assert_eq!(sub.nrows(), rows.len(), "{name}: operator_rows({l}) rows");
        for (k, &i) in rows.iter().enumerate() {
            let (a, b) = (sub.row(k), r.row(i as usize));
            assert!(
                a.0 == b.0 && a.1.iter().zip(b.1).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{name}: row {i} of operator_rows({l})"
            );
        }
        assert!(
            plan.operator_rows(l, &[r.nrows() as u32], Par::Rayon).is_err(),
            "{name}: a row out of range must be refused"
        );
    }
    for how in [Evaluation::Chain, Evaluation::Composed, Evaluation::Auto] {
        agrees(&mut refinement, how, "chain");
    }
    if levels > 0 {
        assert!(
            matches!(
                Refinement::chain(&plan, Budget::bytes(16), Par::Rayon),
                Err(crate::SchemeError::OverBudget { .. })
            ),
            "{name}: a 16-byte budget must be refused"
        );
    }
    let diff = y.iter().zip(z.iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff <= tol * scale, "{name}: eval and the operator chain differ by {diff}");
    // Determinism.
    for t in [1, 2, 3] {
        let yt = with_threads(t, || eval(&plan, x.view(), Par::Rayon));
        assert!(
            yt.iter().zip(y.iter()).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}: {t} threads changed the bits"
        );
    }
    let ys = eval(&plan, x.view(), Par::Seq);
    assert!(ys.iter().zip(y.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: Par::Seq changed the bits");
    // f32 agrees with f64.
    let xf = x.mapv(|v| v as f32);
    let yf = eval(&plan, xf.view(), Par::Rayon);
    let d32 = yf.iter().zip(y.iter()).fold(0f64, |m, (a, b)| m.max((f64::from(*a) - b).abs()));
    assert!(d32 <= 1e-5 * scale, "{name}: f32 and f64 differ by {d32}");
    // Modeling = static.
    let (m2, y2) =
        modeling(refiner, mesh, x.view(), levels, Par::Rayon).unwrap_or_else(|e| panic!("{name}: modeling: {e}"));
    let diff = y2.iter().zip(y.iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff <= tol * scale, "{name}: modeling and static differ by {diff}");
    // Faces, where the output is a mesh (samples of a limit are not).
    match (m2.faces(m2.levels(), Par::Rayon), plan.faces(levels, Par::Rayon)) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}: modeling and static faces differ"),
        (Err(SchemeError::NoMesh { .. }), Err(SchemeError::NoMesh { .. })) => {}
        (a, b) => panic!("{name}: faces of modeling and static: {:?} and {:?}", a.err(), b.err()),
    }
    match plan.refined(levels, Par::Rayon) {
        Ok(fine) => {
            let m2_fine = m2.refined(m2.levels(), Par::Seq).unwrap_or_else(|e| panic!("{name}: modeling: {e}"));
            assert_eq!(m2_fine, fine, "{name}: modeling and static meshes differ");
            let faces = plan.faces(levels, Par::Rayon).unwrap_or_else(|e| panic!("{name}: faces({levels}): {e}"));
            assert_eq!(Faces::of(fine), faces, "{name}: the finest faces and its mesh's differ");
        }
        Err(SchemeError::NoMesh { .. }) => {}
        Err(e) => panic!("{name}: refined({levels}): {e}"),
    }
    assert!(
        matches!(plan.refined(levels + 1, Par::Seq), Err(SchemeError::NoSuchLevel { .. })),
        "{name}: a level past the finest must be refused"
    );
}

/// The plan's [`Plan::child_point`] answers, where it gives them: one per
/// row of every operator, each naming an element of the parent level, and
/// none past the rows. A volumetric plan (cell points) is checked by kind:
/// a point per parent vertex, and its edge, face and cell points numbered
/// `0..n` once each.
///
/// # Panics
/// On a row without an answer (where others have one), an answer naming
/// an element the parent does not have, or an answer past the rows.
pub fn check_child_points<P: Plan + ?Sized>(plan: &P) {
    let name = plan.name();
    for l in 0..plan.levels() {
        let rows = plan.level_len(l + 1);
        if plan.child_point(l, 0).is_none() {
            assert!((0..rows).all(|r| plan.child_point(l, r).is_none()), "{name}: child points of some rows only");
            continue;
        }
        if (0..rows).any(|r| matches!(plan.child_point(l, r), Some(ChildPoint::Cell(_)))) {
            check_volumetric_child_points(plan, l);
            continue;
        }
        let Ok(parent) = plan.refined(l, Par::Rayon) else { continue };
        let t = parent.topology();
        for r in 0..rows {
            let ok = match plan.child_point(l, r) {
                Some(ChildPoint::Vertex(v)) => (v as usize) < t.num_vertices(),
                Some(ChildPoint::Face(f) | ChildPoint::Trisection { face: f, .. }) => (f as usize) < t.num_faces(),
                Some(ChildPoint::Edge(e)) => (e as usize) < t.num_edges(),
                Some(ChildPoint::Corner(c)) => (c as usize) < t.num_corners(),
                _ => false,
            };
            assert!(ok, "{name}: row {r} of R_{l} is {:?}, not an element of level {l}", plan.child_point(l, r));
        }
        assert_eq!(plan.child_point(l, rows), None, "{name}: a child point past the rows of R_{l}");
    }
}

/// A volumetric plan's child points of level `l` (its `refined` level is a
/// boundary surface, so they are checked by kind): every parent vertex's
/// point once, and the edge, face and cell points each numbered `0..n`
/// once.
fn check_volumetric_child_points<P: Plan + ?Sized>(plan: &P, l: u32) {
    let name = plan.name();
    let rows = plan.level_len(l + 1);
    let mut seen: [Vec<u32>; 4] = Default::default();
    for r in 0..rows {
        let (kind, i) = match plan.child_point(l, r) {
            Some(ChildPoint::Vertex(v)) => (0, v),
            Some(ChildPoint::Edge(e)) => (1, e),
            Some(ChildPoint::Face(f)) => (2, f),
            Some(ChildPoint::Cell(c)) => (3, c),
            other => panic!("{name}: row {r} of R_{l} is {other:?} in a volumetric plan"),
        };
        seen[kind].push(i);
    }
    for (kind, mut ids) in seen.into_iter().enumerate() {
        ids.sort_unstable();
        assert!(
            ids.iter().enumerate().all(|(n, &i)| n as u32 == i),
            "{name}: the {} points of R_{l} are not numbered 0..n once each",
            ["vertex", "edge", "face", "cell"][kind]
        );
        if kind == 0 {
            assert_eq!(ids.len(), plan.level_len(l), "{name}: a vertex point per vertex of level {l}");
        }
    }
    assert_eq!(plan.child_point(l, rows), None, "{name}: a child point past the rows of R_{l}");
}

/// The type-erased form of `refiner` ([`DynRefiner`]) builds, steps and
/// evaluates as the concrete one does, bit for bit (in `f32`, which every
/// backend computes in), and refuses a plan of another type with
/// [`SchemeError::ForeignPlan`].
///
/// # Panics
/// On any difference, naming the refiner.
pub fn check_dyn<R>(refiner: &R, mesh: &Mesh, levels: u32)
where
    R: Refiner<Input = Mesh> + Send,
    R::Plan: 'static,
{
    let name = refiner.name();
    let erased: &dyn DynRefiner<Mesh> = refiner;
    assert_eq!(erased.name(), name, "{name}: the erased refiner's name");
    let plan = refiner.build(mesh, levels, Par::Rayon).unwrap_or_else(|e| panic!("{name}: build: {e}"));
    let boxed = erased.build_boxed(mesh, levels, Par::Rayon).unwrap_or_else(|e| panic!("{name}: build_boxed: {e}"));
    let x = control_data(plan.input_len(), 3, 11).mapv(|v| v as f32);
    let bits = |a: &Array2<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&eval(&plan, x.view(), Par::Rayon)),
        bits(&eval(&boxed, x.view(), Par::Rayon)),
        "{name}: erased eval"
    );
    let stepped = erased.step_boxed(boxed, Par::Rayon).unwrap_or_else(|e| panic!("{name}: step_boxed: {e}"));
    let direct = refiner.step(plan, Par::Rayon).unwrap_or_else(|e| panic!("{name}: step: {e}"));
    let x = control_data(direct.input_len(), 2, 5).mapv(|v| v as f32);
    assert_eq!(
        bits(&eval(&direct, x.view(), Par::Rayon)),
        bits(&eval(&stepped, x.view(), Par::Rayon)),
        "{name}: erased step"
    );
    struct Other;
    impl Plan for Other {
        fn levels(&self) -> u32 {
            0
        }
        fn level_len(&self, _: u32) -> usize {
            0
        }
        fn eval_f64(
            &self,
            _: ndarray::ArrayView2<'_, f64>,
            _: ndarray::ArrayViewMut2<'_, f64>,
            _: Par,
        ) -> crate::Result<()> {
            Ok(())
        }
        fn eval_f32(
            &self,
            _: ndarray::ArrayView2<'_, f32>,
            _: ndarray::ArrayViewMut2<'_, f32>,
            _: Par,
        ) -> crate::Result<()> {
            Ok(())
        }
        fn operator(&self, level: u32, _: Par) -> crate::Result<subla_algebra::CsrMat<f64>> {
            Err(SchemeError::NoSuchLevel { level, levels: 0 })
        }
        fn refined(&self, _: u32, _: Par) -> crate::Result<&Mesh> {
            Err(SchemeError::NoMesh { scheme: "other" })
        }
    }
    assert!(
        matches!(erased.step_boxed(Box::new(Other), Par::Seq), Err(SchemeError::ForeignPlan { .. })),
        "{name}: a plan of another type must be refused"
    );
}

/// The tensor-form evaluator of `r` (if it has tensor rows; else
/// `Evaluation::Tensor` must be refused) against its composed matrix's:
/// the same bits in `f64` and `f32`, for 1 to 6 channels, and into a
/// strided view; the separable one within rounding, the same bits for any
/// thread count. `x` is control data (`input_len × 3`).
///
/// # Panics
/// On any difference, naming `name`.
pub fn check_tensor(name: &str, r: &Refinement, x: &Array2<f64>) {
    let mut r = r.clone();
    if r.tensor_rows().is_none() {
        for how in [Evaluation::Tensor, Evaluation::Separable] {
            assert!(
                r.evaluator::<f64>(how, 3, Budget::UNLIMITED, Par::Rayon).is_err(),
                "{name}: no tensor rows, so no {how:?} evaluator"
            );
        }
        return;
    }
    let n = x.nrows();
    for d in 1..=6 {
        let xd = Array2::from_shape_fn((n, d), |(i, c)| x[(i, c % 3)] * (1.0 + c as f64));
        let tensor = r.evaluator::<f64>(Evaluation::Tensor, d, Budget::UNLIMITED, Par::Rayon).unwrap();
        let composed = r.evaluator::<f64>(Evaluation::Composed, d, Budget::UNLIMITED, Par::Rayon).unwrap();
        assert!(tensor.is_tensor() && !composed.is_tensor(), "{name}: evaluator kinds");
        assert_eq!(tensor.nnz(), composed.nnz(), "{name}: nonzeros of the tensor form");
        let mut a = Array2::zeros((tensor.output_len(), d));
        let mut b = Array2::zeros((composed.output_len(), d));
        tensor.apply(xd.view(), a.view_mut(), Par::Rayon);
        composed.apply(xd.view(), b.view_mut(), Par::Rayon);
        let bits = |m: &Array2<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert!(bits(&a) == bits(&b), "{name}: the tensor and composed evaluators differ ({d} channels, f64)");
        // The separable kernel: within rounding of the composed matrix, the
        // same bits whatever the threads.
        let scale = xd.iter().fold(1f64, |m, v| m.max(v.abs()));
        let separable = r.evaluator::<f64>(Evaluation::Separable, d, Budget::UNLIMITED, Par::Rayon).unwrap();
        assert!(separable.is_tensor() && separable.nnz() == composed.nnz(), "{name}: the separable evaluator");
        let (mut s, mut s1) = (Array2::zeros(b.dim()), Array2::zeros(b.dim()));
        separable.apply(xd.view(), s.view_mut(), Par::Rayon);
        separable.apply(xd.view(), s1.view_mut(), Par::Seq);
        assert!(bits(&s) == bits(&s1), "{name}: the separable evaluator's bits depend on the threads ({d} channels)");
        let diff = s.iter().zip(&b).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(diff <= 1e-13 * scale, "{name}: the separable and composed evaluators differ by {diff} ({d} channels)");
        let x32 = xd.mapv(|v| v as f32);
        let tensor = r.evaluator::<f32>(Evaluation::Tensor, d, Budget::UNLIMITED, Par::Rayon).unwrap();
        let composed = r.evaluator::<f32>(Evaluation::Composed, d, Budget::UNLIMITED, Par::Rayon).unwrap();
        let mut a = Array2::zeros((tensor.output_len(), d));
        let mut b = Array2::zeros((composed.output_len(), d));
        tensor.apply(x32.view(), a.view_mut(), Par::Seq);
        composed.apply(x32.view(), b.view_mut(), Par::Rayon);
        let bits = |m: &Array2<f32>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert!(bits(&a) == bits(&b), "{name}: the tensor and composed evaluators differ ({d} channels, f32)");
        let separable = r.evaluator::<f32>(Evaluation::Separable, d, Budget::UNLIMITED, Par::Rayon).unwrap();
        let mut s = Array2::zeros(b.dim());
        separable.apply(x32.view(), s.view_mut(), Par::Rayon);
        let diff = s.iter().zip(&b).fold(0f64, |m, (p, q)| m.max(f64::from((p - q).abs())));
        assert!(
            diff <= 1e-5 * scale,
            "{name}: the separable and composed evaluators differ by {diff} ({d} channels, f32)"
        );
        // A view that is not contiguous (every other column of a wider
        // output) gets the same values.
        let mut wide = Array2::zeros((tensor.output_len(), 2 * d));
        tensor.apply(x32.view(), wide.slice_mut(ndarray::s![.., ..;2]), Par::Rayon);
        assert!(wide.slice(ndarray::s![.., ..;2]) == b, "{name}: tensor evaluator into a strided view");
    }
}

/// Checks a refiner's predictions ([`Refiner::predict`]) against its
/// builds on `mesh`: for `0..=levels` levels, the predicted vertex and face
/// counts of every level are the built ones and the predicted chain bytes
/// bound the built chain's; and a build of a level count whose counts
/// overflow `u32` (20 levels, and `u32::MAX`) is refused from the counts,
/// with [`SchemeError::LevelTooLarge`], before anything is allocated.
///
/// # Panics
/// With a message naming the broken clause.
pub fn check_predictions<R: Refiner<Input = Mesh> + ?Sized>(refiner: &R, mesh: &Mesh, levels: u32) {
    let name = refiner.name();
    for l in 0..=levels {
        let p = refiner
            .predict(mesh, l)
            .unwrap_or_else(|e| panic!("{name}: predict({l}) failed: {e}"))
            .unwrap_or_else(|| panic!("{name}: no prediction"));
        let plan = refiner.build(mesh, l, Par::Rayon).unwrap_or_else(|e| panic!("{name}: build failed: {e}"));
        assert_eq!(p.levels.len(), l as usize + 1, "{name}: predicted levels");
        for k in 0..=l {
            let f = plan.faces(k, Par::Rayon).unwrap_or_else(|e| panic!("{name}: faces({k}): {e}"));
            let c = p.levels[k as usize];
            assert_eq!(c.vertices, f.num_vertices() as u128, "{name}, {l} levels: vertices of level {k}");
            assert_eq!(c.faces, f.num_faces() as u128, "{name}, {l} levels: faces of level {k}");
            assert_eq!(c.corners, f.face_verts().len() as u128, "{name}, {l} levels: corners of level {k}");
        }
        let r = Refinement::chain(&plan, Budget::UNLIMITED, Par::Rayon).expect("chain");
        let predicted = p.chain_bytes().unwrap_or_else(|| panic!("{name}: no operator bounds"));
        assert!(
            predicted >= u128::from(r.chain_bytes()),
            "{name}, {l} levels: chain {} > {predicted}",
            r.chain_bytes()
        );
        if l > 0 {
            let with = r.with_limit(&plan, Budget::UNLIMITED, Par::Rayon);
            if let Ok(with) = with {
                let lim = with.levels().last().expect("the limit");
                let bytes = crate::refinement::csr_bytes(lim.nrows(), lim.nnz() as u64);
                assert!(p.limit_bytes() >= u128::from(bytes), "{name}: limit {bytes} > {}", p.limit_bytes());
            }
        }
    }
    for l in [20, 64, u32::MAX] {
        let start = std::time::Instant::now();
        let e = refiner.predict(mesh, l).expect_err("predicted over u32");
        assert!(matches!(e, SchemeError::LevelTooLarge { .. }), "{name}: predict({l}): {e}");
        match refiner.build(mesh, l, Par::Rayon) {
            Err(SchemeError::LevelTooLarge { level, value, .. }) => {
                assert!(level <= 40 && value > u128::from(u32::MAX), "{name}: level {level}, {value}");
            }
            Err(e) => panic!("{name}: build({l}): expected LevelTooLarge, got {e}"),
            Ok(_) => panic!("{name}: build({l}) succeeded"),
        }
        assert!(start.elapsed().as_secs() < 5, "{name}: refusing {l} levels took {:?}", start.elapsed());
    }
}
