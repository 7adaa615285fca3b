//! OBJ parsing of a 1M-face mesh: subla (parse, and parse + topology with
//! validation) against tobj, with a memory-bandwidth reference (copying the
//! text and scanning it for line ends) in the same run.
//!
//! `cargo bench -p subla-bench --bench obj`

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use subla_bench::{criterion, mean_seconds, pool, report};
use subla_mesh::Validation;
use subla_mesh::obj::parse_obj;

const GROUP: &str = "obj_parse_1M_quads";

fn generate(side: usize) -> String {
    let mut s = String::with_capacity(side * side * 60);
    for r in 0..=side {
        for c in 0..=side {
            let z = ((r * 7 + c * 13) % 101) as f64 * 0.0137;
            let _ = writeln!(s, "v {} {} {}", c as f64 * 0.001 + 0.000_123, r as f64 * 0.001 - 0.5, z);
        }
    }
    for r in 0..side {
        for c in 0..side {
            let v = |rr: usize, cc: usize| rr * (side + 1) + cc + 1;
            let _ = writeln!(s, "f {} {} {} {}", v(r, c), v(r, c + 1), v(r + 1, c + 1), v(r + 1, c));
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let text = generate(1000);
    let bytes = text.as_bytes();
    let threads = rayon::current_num_threads();
    let nt = format!("{threads}threads");
    let p1 = pool(1);
    let pn = pool(threads);
    let mut g = c.benchmark_group(GROUP);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(10);
    for (label, p) in [("1thread", &p1), (nt.as_str(), &pn)] {
        g.bench_function(BenchmarkId::new("subla_parse_and_topology", label), |b| {
            p.install(|| b.iter(|| black_box(parse_obj(bytes, Validation::OpenSubdiv).map(|d| d.mesh.num_faces()))))
        });
    }
    g.bench_function(BenchmarkId::new("tobj", "1thread"), |b| {
        b.iter(|| {
            let mut reader = std::io::BufReader::new(bytes);
            black_box(
                tobj::load_obj_buf(&mut reader, &tobj::LoadOptions::default(), |_| Ok(Default::default()))
                    .map(|m| m.0.len()),
            )
        })
    });
    g.bench_function(BenchmarkId::new("memcpy_and_line_scan", "1thread"), |b| {
        b.iter(|| {
            let copy = bytes.to_vec();
            black_box(memchr::memchr_iter(b'\n', &copy).count())
        })
    });
    g.finish();
    report(
        GROUP,
        &[
            ("subla_parse_and_topology/1thread", "tobj/1thread"),
            (&format!("subla_parse_and_topology/{nt}"), "tobj/1thread"),
            ("subla_parse_and_topology/1thread", "memcpy_and_line_scan/1thread"),
            (&format!("subla_parse_and_topology/{nt}"), "memcpy_and_line_scan/1thread"),
        ],
    );
    if let Some(t) = mean_seconds(GROUP, &format!("subla_parse_and_topology/{nt}")) {
        println!(
            "subla: {:.0} MB/s of OBJ text ({} bytes, 1M quads) on {threads} threads",
            bytes.len() as f64 / t / 1e6,
            bytes.len()
        );
    }
}

fn main() {
    let mut c = criterion();
    bench(&mut c);
    c.final_summary();
}
