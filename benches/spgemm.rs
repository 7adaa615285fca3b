//! Mapped SpGEMM against sprs's SpGEMM on mesh adjacency products: M Mᵀ of
//! a 100k-face quad mesh (Mlakar et al. 2020, Eq. 4 and 6).
//!
//! `cargo bench -p subla-bench --bench spgemm`

use criterion::{BenchmarkId, Criterion};
use std::hint::black_box;
use subla_algebra::Par;
use subla_algebra::spgemm::{self, Collision, Ops};
use subla_bench::{criterion, pool, report, torus_mesh_matrix};

const GROUP: &str = "spgemm_MMt_100k_quads";

fn bench(c: &mut Criterion) {
    let m = torus_mesh_matrix(317); // 100,489 quads
    let m_csr = m.to_csr(Par::Rayon);
    let mt_csr = m.as_ref().transpose().to_owned(); // CSR of Mᵀ = CSC storage of M
    let mt_csc = m_csr.clone().into_transpose(); // CSC of Mᵀ
    let mf = m_csr.clone().map_values(|_| 1.0f64);
    let mtf = mt_csr.clone().map_values(|_| 1.0f64);
    let sa = mf.to_sprs();
    let sb = mtf.to_sprs();
    let threads = rayon::current_num_threads();
    let nt = format!("{threads}threads");
    let p1 = pool(1);
    let pn = pool(threads);
    let q = |a: u32, b: u32| b == a % 4 + 1;

    let mut g = c.benchmark_group(GROUP);
    for (label, p) in [("1thread", &p1), (nt.as_str(), &pn)] {
        g.bench_function(BenchmarkId::new("subla_plain", label), |b| {
            p.install(|| b.iter(|| black_box(spgemm::multiply(mf.as_ref(), mtf.as_ref(), &Ops::product(), Par::Rayon))))
        });
        // Eq. 4 through the CSC path the paper uses: E = M Mᵀ {Q + Q⁻¹}[τ].
        g.bench_function(BenchmarkId::new("subla_eq4_csc", label), |b| {
            let ops = Ops::new(
                |a: &u32, b: &u32| (*a, *b),
                |(a, b), _c: &Collision<'_, u32, u32>| (q(a, b) || q(b, a)).then_some(1u32),
            );
            p.install(|| b.iter(|| black_box(spgemm::multiply(m.as_ref(), mt_csc.as_ref(), &ops, Par::Rayon))))
        });
        g.bench_function(BenchmarkId::new("subla_symbolic", label), |b| {
            p.install(|| b.iter(|| black_box(spgemm::structure(mf.pattern(), mtf.pattern(), Par::Rayon))))
        });
        g.bench_function(BenchmarkId::new("sprs", label), |b| p.install(|| b.iter(|| black_box(&sa * &sb))));
    }
    g.finish();

    let rows = [
        ("subla_plain/1thread".to_string(), "sprs/1thread".to_string()),
        (format!("subla_plain/{nt}"), format!("sprs/{nt}")),
        ("subla_eq4_csc/1thread".to_string(), "sprs/1thread".to_string()),
        (format!("subla_eq4_csc/{nt}"), format!("sprs/{nt}")),
    ];
    let rows: Vec<(&str, &str)> = rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    report(GROUP, &rows);
}

fn main() {
    let mut c = criterion();
    bench(&mut c);
    c.final_summary();
}
