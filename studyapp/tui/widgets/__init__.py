"""Small drawn widgets shared by the screens."""
