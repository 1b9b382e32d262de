package dev.sluice.testkit;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.security.auth.x500.X500Principal;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway certificate authority for tests and the secure demo: issues server and client
 * certificates (EC P-256) and writes them as PEM files (certificate chain, PKCS#8 key), as an
 * operator's tooling would. Not for production use: keys live in a temp directory.
 */
public final class TestPki {
  private static final AtomicLong SERIALS = new AtomicLong(System.nanoTime() & 0xffffffL);

  private final Path dir;
  private final String name;
  private final KeyPair caKeys;
  private final X509Certificate caCert;

  /** The PEM files of one issued certificate. */
  public record Issued(Path cert, Path key, String subject) {}

  private TestPki(Path dir, String name, KeyPair keys, X509Certificate cert) {
    this.dir = dir;
    this.name = name;
    this.caKeys = keys;
    this.caCert = cert;
  }

  /** A new CA named {@code name}, its certificate written to {@code dir/name-ca.pem}. */
  public static TestPki create(Path dir, String name) {
    try {
      Files.createDirectories(dir);
      KeyPair keys = keyPair();
      X500Name subject = new X500Name("CN=" + name + " test CA,O=Sluice");
      Instant now = Instant.now();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              subject,
              BigInteger.valueOf(SERIALS.incrementAndGet()),
              Date.from(now.minus(Duration.ofHours(1))),
              Date.from(now.plus(Duration.ofDays(365))),
              subject,
              keys.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      X509Certificate cert = sign(b, keys);
      TestPki pki = new TestPki(dir, name, keys, cert);
      write(pki.caFile(), pem(cert));
      return pki;
    } catch (GeneralSecurityException | IOException | RuntimeException e) {
      throw new IllegalStateException("cannot create test CA " + name + ": " + e, e);
    }
  }

  public Path caFile() {
    return dir.resolve(name + "-ca.pem");
  }

  /** A server certificate for localhost and 127.0.0.1, valid for a day. */
  public Issued server(String file) {
    return issue(file, "CN=localhost,O=Sluice", true, Duration.ofDays(1), false);
  }

  /** A client certificate with subject {@code CN=<cn>,O=Sluice}, valid for a day. */
  public Issued client(String file, String cn) {
    return issue(file, "CN=" + cn + ",O=Sluice", false, Duration.ofDays(1), false);
  }

  /** A client certificate that expired an hour ago. */
  public Issued expiredClient(String file, String cn) {
    return issue(file, "CN=" + cn + ",O=Sluice", false, Duration.ofDays(1), true);
  }

  private Issued issue(
      String file, String subject, boolean server, Duration valid, boolean expired) {
    try {
      KeyPair keys = keyPair();
      Instant now = Instant.now();
      Instant from = expired ? now.minus(valid).minus(Duration.ofHours(1)) : now.minusSeconds(60);
      Instant to = expired ? now.minus(Duration.ofHours(1)) : now.plus(valid);
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              caCert,
              BigInteger.valueOf(SERIALS.incrementAndGet()),
              Date.from(from),
              Date.from(to),
              // RFC 2253 order, as X500Principal (and `openssl x509 -nameopt RFC2253`) write it
              X500Name.getInstance(new X500Principal(subject).getEncoded()),
              keys.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      if (server) {
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(
                new GeneralName[] {
                  new GeneralName(GeneralName.dNSName, "localhost"),
                  new GeneralName(GeneralName.iPAddress, "127.0.0.1")
                }));
      }
      X509Certificate cert = sign(b, caKeys);
      Path certFile = dir.resolve(file + ".pem");
      Path keyFile = dir.resolve(file + "-key.pem");
      write(certFile, pem(cert) + pem(caCert));
      write(keyFile, pem(new JcaPKCS8Generator(keys.getPrivate(), null).generate()));
      return new Issued(certFile, keyFile, subject);
    } catch (GeneralSecurityException | IOException | RuntimeException e) {
      throw new IllegalStateException("cannot issue " + subject + ": " + e, e);
    }
  }

  private static KeyPair keyPair() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(256, new SecureRandom());
    return g.generateKeyPair();
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair issuer)
      throws GeneralSecurityException {
    try {
      ContentSigner signer =
          new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate());
      return new JcaX509CertificateConverter().getCertificate(b.build(signer));
    } catch (org.bouncycastle.operator.OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }

  private static String pem(Object o) throws IOException {
    StringWriter s = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(s)) {
      w.writeObject(o);
    }
    return s.toString();
  }

  private static void write(Path p, String text) {
    try {
      Files.writeString(p, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
