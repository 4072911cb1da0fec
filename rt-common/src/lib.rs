//! The GPU threads runtime, generic over a [`Hal`].
#![no_std]
pub mod abi;
pub mod protocol;
