//! Scratch: compare sparse level vertex counts with the goldens' headers.
use subla_adaptive::SparseRefinement;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let meshes = std::env::args().nth(2).unwrap();
    let mut ok = 0;
    let mut bad = 0;
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().map_or(false, |e| e == "txt"))
        .collect();
    names.sort();
    for p in names {
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if !name.starts_with("catmark") {
            continue;
        }
        let shape = name.split('.').next().unwrap();
        let iso: u32 = name.split('.').nth(1).unwrap()[3..].parse().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let counts: Vec<usize> = text
            .lines()
            .nth(1)
            .unwrap()
            .split(':')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let sel: Option<Vec<u32>> = if name.contains("selected") {
            let f = p.with_extension("faces");
            Some(
                std::fs::read_to_string(f)
                    .unwrap()
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.trim().parse().unwrap())
                    .collect(),
            )
        } else {
            None
        };
        let mesh = match subla_mesh::obj::read_obj(
            std::path::Path::new(&format!("{meshes}/{shape}.obj")),
            subla_mesh::Validation::OpenSubdiv,
        ) {
            Ok(d) => d.mesh,
            Err(e) => {
                println!("{name}: read {e}");
                bad += 1;
                continue;
            }
        };
        match SparseRefinement::build(&mesh, iso, sel.as_deref()) {
            Ok(r) => {
                let got = r.vertices_per_level();
                if got == counts {
                    ok += 1;
                } else {
                    bad += 1;
                    println!("{name}: got {got:?} want {counts:?}");
                }
            }
            Err(e) => {
                bad += 1;
                println!("{name}: {e}");
            }
        }
    }
    println!("ok {ok} bad {bad}");
}
