package dev.sluice.manager.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Image;
import org.commonmark.node.Link;
import org.junit.jupiter.api.Test;

/**
 * Every link and image in the README and the docs leads somewhere: a file or directory of the
 * checkout, and where it names an anchor, a heading of that page (as GitHub ids headings). External
 * links (http, https, mailto) are not followed.
 */
class DocsLinksTest {

  @Test
  void everyLinkAndAnchorResolves() {
    Path root = Docs.root();
    List<String> broken = new ArrayList<>();
    List<Path> files = Docs.files(root);
    for (Path file : files) {
      Docs.parse(file)
          .accept(
              new AbstractVisitor() {
                @Override
                public void visit(Link link) {
                  check(root, file, link.getDestination(), broken);
                  visitChildren(link);
                }

                @Override
                public void visit(Image image) {
                  check(root, file, image.getDestination(), broken);
                }
              });
    }
    assertThat(files).as("the documentation's pages").hasSizeGreaterThan(10);
    assertThat(broken).as("links that lead nowhere").isEmpty();
  }

  @Test
  void anchorsAreTheHeadingsGitHubIds() {
    assertThat(Docs.slug("Operating Sluice: the sluice command"))
        .isEqualTo("operating-sluice-the-sluice-command");
    assertThat(Docs.slug("Queue options (the table comment)"))
        .isEqualTo("queue-options-the-table-comment");
    assertThat(Docs.slug("Versions: what is stable")).isEqualTo("versions-what-is-stable");
  }

  private static void check(Path root, Path file, String destination, List<String> broken) {
    String where = root.relativize(file) + ": (" + destination + ")";
    if (destination.isEmpty() || destination.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
      return; // external: http, https, mailto
    }
    int hash = destination.indexOf('#');
    String path = hash < 0 ? destination : destination.substring(0, hash);
    String anchor = hash < 0 ? null : destination.substring(hash + 1);
    Path target =
        path.isEmpty()
            ? file
            : file.getParent().resolve(URLDecoder.decode(path, StandardCharsets.UTF_8)).normalize();
    if (!target.startsWith(root)) {
      broken.add(where + " leaves the checkout");
    } else if (!Files.exists(target)) {
      broken.add(where + " names no file");
    } else if (anchor != null && target.toString().endsWith(".md")) {
      if (!Docs.anchors(target).contains(anchor)) {
        broken.add(where + " names no heading of " + root.relativize(target));
      }
    }
  }
}
