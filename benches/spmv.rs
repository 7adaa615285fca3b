//! Mapped SpMV (Mlakar et al. 2020, Eq. 1) against sprs and nalgebra-sparse
//! on a mesh-like operator with 1M rows and 3 channels (f64).
//!
//! `cargo bench -p subla-bench --bench spmv`

use criterion::{BenchmarkId, Criterion};
use ndarray::Array2;
use std::hint::black_box;
use subla_algebra::Par;
use subla_algebra::spmv::{Update, spmv_csc_into, spmv_csr_into};
use subla_bench::{criterion, pool, report, stencil_matrix};

const GROUP: &str = "spmv_1M_rows_3ch";

fn bench(c: &mut Criterion) {
    let side = 1024; // 1,048,576 rows, 9.4M nonzeros
    let a = stencil_matrix(side);
    let n = a.nrows();
    let x = Array2::from_shape_fn((n, 3), |(i, k)| ((i * 3 + k) as f64 * 0.37).sin());
    let a_csc = a.to_csc(Par::Rayon);
    let sp = a.to_sprs();
    let na = nalgebra_sparse::CsrMatrix::from(&a);
    let xd = nalgebra::DMatrix::from_fn(n, 3, |i, k| x[(i, k)]);
    let scale: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.125).collect();
    let threads = rayon::current_num_threads();
    let p1 = pool(1);
    let pn = pool(threads);

    let mut g = c.benchmark_group(GROUP);
    g.throughput(criterion::Throughput::Elements(a.nnz() as u64));
    let mut y = Array2::<f64>::zeros((n, 3));
    g.bench_function(BenchmarkId::new("subla_csr_identity", "1thread"), |b| {
        p1.install(|| b.iter(|| spmv_csr_into(a.as_ref(), x.view(), y.view_mut(), Update::Set, |&v, _, _| v, Par::Seq)))
    });
    g.bench_function(BenchmarkId::new("subla_csr_identity", format!("{threads}threads")), |b| {
        pn.install(|| {
            b.iter(|| spmv_csr_into(a.as_ref(), x.view(), y.view_mut(), Update::Set, |&v, _, _| v, Par::Rayon))
        })
    });
    g.bench_function(BenchmarkId::new("subla_csr_rowscale", "1thread"), |b| {
        p1.install(|| {
            b.iter(|| {
                spmv_csr_into(
                    a.as_ref(),
                    x.view(),
                    y.view_mut(),
                    Update::Set,
                    |&v, i, _| v * scale[i as usize],
                    Par::Seq,
                )
            })
        })
    });
    g.bench_function(BenchmarkId::new("subla_csr_rowscale", format!("{threads}threads")), |b| {
        pn.install(|| {
            b.iter(|| {
                spmv_csr_into(
                    a.as_ref(),
                    x.view(),
                    y.view_mut(),
                    Update::Set,
                    |&v, i, _| v * scale[i as usize],
                    Par::Rayon,
                )
            })
        })
    });
    g.bench_function(BenchmarkId::new("subla_csc_identity", "1thread"), |b| {
        p1.install(|| {
            b.iter(|| spmv_csc_into(a_csc.as_ref(), x.view(), y.view_mut(), Update::Set, |&v, _, _| v, Par::Seq))
        })
    });
    g.bench_function(BenchmarkId::new("subla_csc_identity", format!("{threads}threads")), |b| {
        pn.install(|| {
            b.iter(|| spmv_csc_into(a_csc.as_ref(), x.view(), y.view_mut(), Update::Set, |&v, _, _| v, Par::Rayon))
        })
    });
    // Peers: sprs (single-threaded SpMV), its row-scaled form materialised
    // beforehand (sprs has no action maps), and nalgebra-sparse.
    g.bench_function(BenchmarkId::new("sprs", "1thread"), |b| b.iter(|| black_box(&sp * &x)));
    let mut yd = nalgebra::DMatrix::<f64>::zeros(n, 3);
    g.bench_function(BenchmarkId::new("nalgebra_sparse", "1thread"), |b| {
        b.iter(|| {
            nalgebra_sparse::ops::serial::spmm_csr_dense(
                0.0,
                &mut yd,
                1.0,
                nalgebra_sparse::ops::Op::NoOp(&na),
                nalgebra_sparse::ops::Op::NoOp(&xd),
            )
        })
    });
    g.finish();

    let nt = format!("{threads}threads");
    let rows = [
        ("subla_csr_identity/1thread".to_string(), "sprs/1thread"),
        (format!("subla_csr_identity/{nt}"), "sprs/1thread"),
        ("subla_csr_rowscale/1thread".to_string(), "sprs/1thread"),
        (format!("subla_csr_rowscale/{nt}"), "sprs/1thread"),
        ("subla_csc_identity/1thread".to_string(), "sprs/1thread"),
        (format!("subla_csc_identity/{nt}"), "sprs/1thread"),
        ("subla_csr_identity/1thread".to_string(), "nalgebra_sparse/1thread"),
        (format!("subla_csr_identity/{nt}"), "nalgebra_sparse/1thread"),
    ];
    let rows: Vec<(&str, &str)> = rows.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    report(GROUP, &rows);
}

fn main() {
    let mut c = criterion();
    bench(&mut c);
    c.final_summary();
}
