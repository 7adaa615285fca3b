//! PLY (todo)
