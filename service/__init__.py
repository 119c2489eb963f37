"""Free Parking: an event-sourced game service."""
