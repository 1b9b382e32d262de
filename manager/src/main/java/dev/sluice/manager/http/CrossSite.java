package dev.sluice.manager.http;

import com.sun.net.httpserver.Headers;
import java.net.URI;
import java.util.Locale;

/**
 * The status page's defence against cross-site request forgery, for its actions (POSTs that change
 * events or pause queues). A browser sends the page's credentials (basic auth, a client
 * certificate) with any request to the manager, also one a foreign site makes it send; so an action
 * is refused (403) unless:
 *
 * <ul>
 *   <li>its body is JSON ({@code Content-Type: application/json}) and it carries the header {@value
 *       #HEADER}: an HTML form can send neither, and a script of another origin cannot add a custom
 *       header without a CORS preflight, which this server never grants;
 *   <li>the browser does not say it comes from another site: {@code Sec-Fetch-Site}, when sent, is
 *       {@code same-origin} or {@code none}; {@code Origin}, when sent, names this server (its host
 *       and port as the request's {@code Host}).
 * </ul>
 *
 * <p>The page sets no cookie, so there is no cookie to protect with {@code SameSite}. Stateless.
 */
final class CrossSite {
  /** The header every action must carry (any value). */
  static final String HEADER = "X-Sluice-Action";

  private CrossSite() {}

  /** Why the request must be refused, or null when it may act. */
  static String refusal(Headers h) {
    String type = h.getFirst("Content-Type");
    if (type == null || !type.toLowerCase(Locale.ROOT).strip().startsWith("application/json")) {
      return "an action needs a JSON body (Content-Type: application/json)";
    }
    if (h.getFirst(HEADER) == null) {
      return "an action needs the " + HEADER + " header (the status page sends it)";
    }
    String site = h.getFirst("Sec-Fetch-Site");
    if (site != null && !site.equals("same-origin") && !site.equals("none")) {
      return "a cross-site request may not act (Sec-Fetch-Site: " + site + ")";
    }
    String origin = h.getFirst("Origin");
    if (origin != null && !sameHost(origin, h.getFirst("Host"))) {
      return "a request from another origin may not act (Origin: " + origin + ")";
    }
    return null;
  }

  private static boolean sameHost(String origin, String host) {
    if (host == null || origin.equals("null")) {
      return false;
    }
    try {
      URI o = URI.create(origin);
      String authority = o.getPort() < 0 ? o.getHost() : o.getHost() + ":" + o.getPort();
      return authority != null && authority.equalsIgnoreCase(host.strip())
          || o.getPort() < 0
              && o.getHost() != null
              && host.strip()
                  .equalsIgnoreCase(o.getHost() + ":" + ("https".equals(o.getScheme()) ? 443 : 80));
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
