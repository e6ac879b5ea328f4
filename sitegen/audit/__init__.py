"""`sitegen verify`: a reader reads a publication back and checks it with the build's own phases."""
