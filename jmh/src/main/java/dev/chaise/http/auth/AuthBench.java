package dev.chaise.http.auth;

import dev.chaise.http.config.HttpConfig;
import dev.chaise.http.config.InMemoryConfigStore;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A request's authentication as couchbench sends it: Basic for a server admin whose password was
 * checked before (the PBKDF2 check is cached, so this is the per-request cost).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class AuthBench {
    private Authenticator authenticator;
    private AuthRequest request;

    @Setup
    public void setup() {
        HttpConfig.Auth settings = HttpConfig.Auth.defaults();
        InMemoryConfigStore config = new InMemoryConfigStore(Map.of("admins", Map.of("admin", ServerAdmins.stored("admin", settings))));
        authenticator = new Authenticator(List.of(new ServerAdmins(config)), new SessionCookies("secret", settings, () -> System.currentTimeMillis() / 1000), config, new dev.chaise.stats.Stats());
        String basic = "Basic " + Base64.getEncoder().encodeToString("admin:admin".getBytes(StandardCharsets.UTF_8));
        request = new AuthRequest() {
            @Override
            public String method() {
                return "GET";
            }

            @Override
            public List<String> path() {
                return List.of("couchbench_bulk", "b0001234");
            }

            @Override
            public String header(String name) {
                return name.equalsIgnoreCase("Authorization") ? basic : null;
            }

            @Override
            public String remoteAddress() {
                return "/127.0.0.1:40000";
            }
        };
        authenticator.authenticate(request); // the PBKDF2 check, once
    }

    @Benchmark
    public AuthenticationHandler.Authenticated basicAdmin() {
        return authenticator.authenticate(request);
    }
}
