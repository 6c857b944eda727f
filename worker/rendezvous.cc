// placeholder replaced by the rendezvous implementation
