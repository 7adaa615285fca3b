//! Writes the example control meshes of `data/solids` (VTK legacy ASCII)
//! into the folder given as the first argument:
//!
//! `cargo run -p subla-volume --example solid_shapes -- data/solids`

use std::path::PathBuf;

use subla_volume::shapes;
use subla_volume::vtk::{VtkEncoding, write_vtk_file};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: solid_shapes OUT_DIR")?);
    std::fs::create_dir_all(&dir)?;
    for (name, data) in shapes::examples()? {
        let path = dir.join(format!("{name}.vtk"));
        write_vtk_file(&data, &path, VtkEncoding::Ascii)?;
        println!("{}: {} cells, {} vertices", path.display(), data.mesh.num_cells(), data.mesh.num_vertices());
    }
    Ok(())
}
