package dev.sluice.manager.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.sluice.manager.security.HttpAccess;
import java.io.IOException;
import java.net.InetSocketAddress;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * The HTTP port's TLS and access check, kept apart from the pages {@link StatusHttpServer} serves.
 */
final class SecureHttp {
  private SecureHttp() {}

  /**
   * An HTTPS server when {@code ssl} is given (asking for a client certificate if told, requiring
   * one, verified against the context's trust, if {@code needClientCert}), else HTTP.
   */
  static HttpServer create(
      InetSocketAddress addr,
      int backlog,
      SSLContext ssl,
      boolean wantClientCert,
      boolean needClientCert)
      throws IOException {
    if (ssl == null) {
      return HttpServer.create(addr, backlog);
    }
    HttpsServer s = HttpsServer.create(addr, backlog);
    s.setHttpsConfigurator(
        new HttpsConfigurator(ssl) {
          @Override
          public void configure(HttpsParameters p) {
            SSLParameters params = ssl.getDefaultSSLParameters();
            if (needClientCert) {
              params.setNeedClientAuth(true); // as the gRPC server does with client_auth: require
            } else {
              params.setWantClientAuth(wantClientCert);
            }
            p.setSSLParameters(params);
          }
        });
    return s;
  }

  /**
   * Whether the request may go on; if not, answers it (401 with a Basic challenge, or 403) and says
   * nothing about the manager.
   */
  static boolean admit(HttpExchange x, String path, HttpAccess access) throws IOException {
    HttpAccess.Verdict v =
        access.check(
            path,
            x.getRequestHeaders().getFirst("Authorization"),
            x instanceof HttpsExchange h ? h.getSSLSession() : null);
    switch (v) {
      case ALLOW -> {
        return true;
      }
      case UNAUTHENTICATED -> {
        x.getResponseHeaders().set("WWW-Authenticate", "Basic realm=\"sluice\", charset=\"UTF-8\"");
        StatusHttpServer.send(
            x,
            401,
            "text/plain",
            "authentication required: a bearer token, or basic auth with the token as password\n");
      }
      case FORBIDDEN ->
          StatusHttpServer.send(
              x, 403, "text/plain", "this principal may not read the status (needs stats on *)\n");
    }
    return false;
  }
}
