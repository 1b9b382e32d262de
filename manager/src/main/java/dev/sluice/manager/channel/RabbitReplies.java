package dev.sluice.manager.channel;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Method;
import com.rabbitmq.client.ShutdownSignalException;

/** The words of a {@link RabbitPublisher}'s failures: the broker's reply codes and reasons. */
final class RabbitReplies {
  private RabbitReplies() {}

  /** "channel closed by the broker: 404 NOT_FOUND - no exchange 'x' in vhost '/'". */
  static String brokerReason(ShutdownSignalException s) {
    Method m = s.getReason();
    if (m instanceof AMQP.Channel.Close c) {
      return "channel closed by the broker: " + replyText(c.getReplyCode(), c.getReplyText());
    }
    return shutdownReason(s);
  }

  static String shutdownReason(ShutdownSignalException s) {
    Method m = s.getReason();
    if (m instanceof AMQP.Connection.Close c) {
      return (s.isInitiatedByApplication() ? "closed by the publisher: " : "closed by the broker: ")
          + replyText(c.getReplyCode(), c.getReplyText());
    }
    if (m instanceof AMQP.Channel.Close c) {
      return "channel closed: " + replyText(c.getReplyCode(), c.getReplyText());
    }
    Throwable cause = s.getCause();
    return cause != null ? reason(cause) : String.valueOf(s.getMessage());
  }

  /** The reply code's name, then the broker's text when it says more: "NO_ROUTE". */
  static String replyText(int code, String text) {
    String name = codeName(code);
    if (text == null || text.isBlank() || text.equals(name)) {
      return name + " (" + code + ")";
    }
    return text.startsWith(name) ? code + " " + text : code + " " + name + " - " + text;
  }

  private static String codeName(int code) {
    return switch (code) {
      case 311 -> "CONTENT_TOO_LARGE";
      case 312 -> "NO_ROUTE";
      case 313 -> "NO_CONSUMERS";
      case 320 -> "CONNECTION_FORCED";
      case 402 -> "INVALID_PATH";
      case 403 -> "ACCESS_REFUSED";
      case 404 -> "NOT_FOUND";
      case 405 -> "RESOURCE_LOCKED";
      case 406 -> "PRECONDITION_FAILED";
      case 501 -> "FRAME_ERROR";
      case 502 -> "SYNTAX_ERROR";
      case 503 -> "COMMAND_INVALID";
      case 504 -> "CHANNEL_ERROR";
      case 505 -> "UNEXPECTED_FRAME";
      case 506 -> "RESOURCE_ERROR";
      case 530 -> "NOT_ALLOWED";
      case 540 -> "NOT_IMPLEMENTED";
      case 541 -> "INTERNAL_ERROR";
      default -> "reply code";
    };
  }

  static String reason(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t && t.getMessage() == null) {
      t = t.getCause();
    }
    if (t instanceof ShutdownSignalException s) {
      return shutdownReason(s);
    }
    String msg = t.getMessage();
    return msg == null ? t.getClass().getSimpleName() : t.getClass().getSimpleName() + ": " + msg;
  }
}
