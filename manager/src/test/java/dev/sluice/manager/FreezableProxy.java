package dev.sluice.manager;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A loopback TCP proxy to one address whose {@link #freeze()} stops forwarding in both directions
 * while keeping every connection open: to the peers it looks like a host that vanished (no RST, no
 * FIN, just silence), which only keepalive pings can detect. {@link #unfreeze()} brings the host
 * back: the connections that lived through the freeze are closed (their bytes were dropped), new
 * ones are forwarded again.
 *
 * <p>Threads: one accepting, two pumping per connection; the frozen flag is read by the pumps.
 */
public final class FreezableProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress upstream;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final CountDownLatch closed = new CountDownLatch(1);
  private final Object thaw = new Object();
  private volatile boolean isFrozen;

  public FreezableProxy(int upstreamPort) throws IOException {
    this.upstream = new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort);
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "proxy-accept");
    t.setDaemon(true);
    t.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  public String target() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** Stops forwarding anything until {@link #unfreeze}; connections stay open. */
  public void freeze() {
    isFrozen = true;
  }

  /**
   * Forwards again: closes every connection open now (it lost bytes while frozen, and so would
   * corrupt whatever it carries next) and forwards the connections made from now on.
   */
  public void unfreeze() {
    synchronized (thaw) {
      isFrozen = false;
      thaw.notifyAll();
    }
    for (Socket s : sockets) {
      closeQuietly(s);
      sockets.remove(s);
    }
  }

  private void accept() {
    while (!listener.isClosed()) {
      Socket down;
      try {
        down = listener.accept();
      } catch (IOException e) {
        return; // the listener is closed
      }
      Socket up = new Socket();
      try {
        sockets.add(down);
        sockets.add(up);
        up.connect(upstream, 2000);
        pump(down, up);
        pump(up, down);
      } catch (IOException e) {
        // This connection only: upstream refused it, or unfreeze() closed it while it was being
        // set up. The proxy goes on accepting (it used to stop here, and every later connection
        // then sat unanswered in the listen backlog).
        closeQuietly(down);
        closeQuietly(up);
        sockets.remove(down);
        sockets.remove(up);
      }
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  private void pump(Socket from, Socket to) throws IOException {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  if (isFrozen) {
                    awaitThaw(); // the bytes read are dropped, nothing more read
                    return;
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // closed
              }
            },
            "proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  /** Until {@link #unfreeze} or {@link #close}. */
  private void awaitThaw() throws InterruptedException {
    synchronized (thaw) {
      while (isFrozen && closed.getCount() > 0) {
        thaw.wait(100);
      }
    }
  }

  @Override
  public void close() throws IOException {
    closed.countDown();
    listener.close();
    for (Socket s : sockets) {
      s.close();
    }
  }
}
