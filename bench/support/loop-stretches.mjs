// The service's synchronous stretches while a case runs (the goal: no request may hold the event loop for more than
// ~20 ms). Run in the service's own process: a 1 ms timer notes every turn of the event loop that came more than
// `thresholdMs` after the previous one, and a PerformanceObserver notes the garbage collector's pauses, so each
// stretch is reported whole and without the GC pauses inside it (the service's own work).
import { PerformanceObserver } from 'node:perf_hooks';

export function watchStretches(thresholdMs = 20) {
  const pauses = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.startTime + entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  const stretches = [];
  const began = performance.now();
  let previous = began;
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - previous > thresholdMs) stretches.push([previous, now]);
    previous = now;
  }, 1);
  return {
    /** { count, longestMs, longestWorkMs }: stretches over the threshold, the longest, and the longest less GC. */
    stop() {
      clearInterval(timer);
      for (const entry of observer.takeRecords())
        pauses.push([entry.startTime, entry.startTime + entry.duration]);
      observer.disconnect();
      let longestMs = 0;
      let longestWorkMs = 0;
      for (const [from, to] of stretches) {
        let gc = 0;
        for (const [start, end] of pauses) gc += Math.max(0, Math.min(to, end) - Math.max(from, start));
        longestMs = Math.max(longestMs, to - from);
        longestWorkMs = Math.max(longestWorkMs, to - from - gc);
      }
      // BENCH_STRETCHES=1: each one, with its time from the start of the case (a cold first request comes first).
      if (process.env.BENCH_STRETCHES === '1') {
        const list = stretches.map(
          ([from, to]) => `+${(from - began).toFixed(0)} ms: ${(to - from).toFixed(0)} ms`,
        );
        process.stderr.write(`stretches: ${list.join(', ')}\n`);
      }
      return { count: stretches.length, longestMs, longestWorkMs };
    },
  };
}

/** `3 stretches > 20 ms, longest 31 ms (19 ms less GC)`. */
export function describeStretches({ count, longestMs, longestWorkMs }, thresholdMs = 20) {
  if (count === 0) return `no stretch > ${thresholdMs} ms`;
  return `${count} stretch${count === 1 ? '' : 'es'} > ${thresholdMs} ms, longest ${longestMs.toFixed(0)} ms (${longestWorkMs.toFixed(0)} ms less GC)`;
}
