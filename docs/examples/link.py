import sys, time
rate = float(sys.argv[1])                      # bytes per second
inp, out = sys.stdin.buffer, sys.stdout.buffer
t0, n = time.monotonic(), 0
while chunk := inp.read1(65536):
    n += len(chunk)
    out.write(chunk)
    delay = t0 + n / rate - time.monotonic()
    if delay > 0:
        time.sleep(delay)
