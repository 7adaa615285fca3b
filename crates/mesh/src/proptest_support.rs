//! proptest
