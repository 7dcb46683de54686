// The JVM program of tests/profiles/test_jfr.py: a known hot method chain
// on the main thread (Busy.main -> Busy.outer -> Busy.hot, most of the CPU
// samples), and workers that allocate (allocation samples), contend on one
// monitor (jdk.JavaMonitorEnter) and park (jdk.ThreadPark), for as many
// milliseconds as its argument says.
import java.util.concurrent.locks.LockSupport;

public class Busy {
    static final Object LOCK = new Object();
    static volatile long sink;
    static volatile Object keep;

    static long hot(long n) {
        long x = 0;
        for (long i = 0; i < n; i++) {
            x += i * 31 ^ (x >>> 3);
        }
        return x;
    }

    static void outer(long n) {
        sink += hot(n);
    }

    static void allocate() {
        for (int i = 0; i < 2000; i++) {
            keep = new byte[4096 + (i & 1023)];
        }
    }

    static void contend() throws InterruptedException {
        synchronized (LOCK) {
            Thread.sleep(15); // the others wait longer than JFR's 10 ms threshold
        }
    }

    static void park() {
        LockSupport.parkNanos(30_000_000L);
    }

    public static void main(String[] args) throws Exception {
        long until = System.currentTimeMillis() + Long.parseLong(args[0]);
        Thread[] ts = new Thread[3];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                try {
                    while (System.currentTimeMillis() < until) {
                        contend();
                        allocate();
                        park();
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            ts[t].start();
        }
        while (System.currentTimeMillis() < until) {
            outer(5000000);
        }
        for (Thread t : ts) {
            t.join();
        }
    }
}
