//! OBJ (todo)
