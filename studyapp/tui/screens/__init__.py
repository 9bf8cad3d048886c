"""The app's screens; each imports only what it draws."""
