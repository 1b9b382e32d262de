package dev.sluice.manager.security;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.health.v1.HealthGrpc;
import javax.net.ssl.SSLSession;

/**
 * Authenticates every gRPC call before it reaches a service and puts its {@link Principal} in the
 * gRPC {@link Context} ({@link #principal()}). A call without valid credentials is closed with
 * UNAUTHENTICATED before any of its messages is read. Reflection needs the {@code admin} action on
 * some queue; health is open when {@code open_health} says so. With authentication off every call
 * runs as {@link Principal#ANONYMOUS}.
 */
public final class AuthInterceptor implements ServerInterceptor {
  public static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Context.Key<Principal> PRINCIPAL = Context.key("sluice-principal");

  private final SecurityConfig config;
  private final Authenticator authenticator;
  private final AuthDenials denials;

  public AuthInterceptor(SecurityConfig config, AuthDenials denials) {
    this.config = config;
    this.authenticator = new Authenticator(config.principals());
    this.denials = denials;
  }

  /** The principal of the current call (ANONYMOUS outside one, or with authentication off). */
  public static Principal principal() {
    Principal p = PRINCIPAL.get();
    return p == null ? Principal.ANONYMOUS : p;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String service = call.getMethodDescriptor().getServiceName();
    if (!config.authEnabled()) {
      return Contexts.interceptCall(
          Context.current().withValue(PRINCIPAL, Principal.ANONYMOUS), call, headers, next);
    }
    if (config.openHealth() && HealthGrpc.SERVICE_NAME.equals(service)) {
      return next.startCall(call, headers);
    }
    SSLSession tls = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    Authenticator.Result r = authenticator.authenticate(headers.get(AUTHORIZATION), tls);
    String what = call.getMethodDescriptor().getFullMethodName();
    if (!r.ok()) {
      denials.deny(null, r.failure().tag(), what);
      return refuse(
          call,
          Status.UNAUTHENTICATED.withDescription(
              "authentication required: a valid bearer token or client certificate"));
    }
    Principal p = r.principal();
    if (service != null
        && service.startsWith("grpc.reflection.")
        && !p.allowsSomewhere(Action.ADMIN)) {
      denials.deny(p.name(), "permission", what);
      return refuse(
          call, Status.PERMISSION_DENIED.withDescription("reflection needs the admin action"));
    }
    return Contexts.interceptCall(Context.current().withValue(PRINCIPAL, p), call, headers, next);
  }

  private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, Status status) {
    call.close(status, new Metadata());
    return new ServerCall.Listener<>() {};
  }
}
