"""The reference simulator: simulated LLM providers with known timings, faults and send-time truth.

Run it with `python manage.py simulate --port P`; from Python, `process.start_simulator()`.
"""
