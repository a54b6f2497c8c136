//! Everything that knows SM50 bits. (Being built; issue 3.)
