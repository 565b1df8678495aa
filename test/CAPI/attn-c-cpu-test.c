/*===- attn-c-cpu-test.c - attention on the CPU through the C API ---------===*\
|*                                                                            *|
|* Part of the attn project: an MLIR compiler for exact attention.            *|
|*                                                                            *|
|* Runs a small grouped-query, causal (Nq != Nk) attention forward and        *|
|* backward through attn-c/Execution.h, checks both against a float64         *|
|* reference computed here, shows that a repeated problem compiles nothing    *|
|* (nor does one at another scale: the scale is an argument of the module),  *|
|* and prints the errors that bad calls get back. Run by                     *|
|* test/CAPI/attn-c-cpu.test.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "attn-c/Execution.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = 2, HQ = 4, HKV = 2, NQ = 5, NK = 9, D = 8 };

static float q[B][HQ][NQ][D], k[B][HKV][NK][D], v[B][HKV][NK][D];
static float out[B][HQ][NQ][D], dout[B][HQ][NQ][D], lse[B][HQ][NQ];
static float dq[B][HQ][NQ][D], dk[B][HKV][NK][D], dv[B][HKV][NK][D];
static double p[B][HQ][NQ][NK]; /* the reference's probabilities */
static double refScale;         /* the scale the reference applies */

static void fill(float *x, int n, unsigned *seed) {
  for (int i = 0; i < n; ++i) {
    *seed = *seed * 1664525u + 1013904223u;
    x[i] = (float)((*seed >> 8) / 16777216.0 * 2.0 - 1.0);
  }
}

/* Bottom-right causal: row i sees keys j <= i + NK - NQ. */
static int sees(int i, int j) { return j <= i + NK - NQ; }

/* The largest |got - want| of the forward (out and lse) against float64. */
static double forwardError(void) {
  double scale = refScale, err = 0.0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < HQ; ++h)
      for (int i = 0; i < NQ; ++i) {
        int g = h / (HQ / HKV);
        double s[NK], m = -INFINITY, sum = 0.0;
        for (int j = 0; j < NK; ++j) {
          s[j] = -INFINITY;
          if (!sees(i, j))
            continue;
          s[j] = 0.0;
          for (int d = 0; d < D; ++d)
            s[j] += (double)q[b][h][i][d] * k[b][g][j][d] * scale;
          m = s[j] > m ? s[j] : m;
        }
        for (int j = 0; j < NK; ++j)
          sum += sees(i, j) ? exp(s[j] - m) : 0.0;
        for (int j = 0; j < NK; ++j)
          p[b][h][i][j] = sees(i, j) ? exp(s[j] - m) / sum : 0.0;
        double want = m + log(sum);
        err = fmax(err, fabs(lse[b][h][i] - want));
        for (int d = 0; d < D; ++d) {
          double o = 0.0;
          for (int j = 0; j < NK; ++j)
            o += p[b][h][i][j] * v[b][g][j][d];
          err = fmax(err, fabs(out[b][h][i][d] - o));
        }
      }
  return err;
}

/* The largest |got - want| of dq, dk, dv against float64 (after
 * forwardError filled p). */
static double backwardError(void) {
  static double wq[B][HQ][NQ][D], wk[B][HKV][NK][D], wv[B][HKV][NK][D];
  double scale = refScale, err = 0.0;
  memset(wq, 0, sizeof(wq));
  memset(wk, 0, sizeof(wk));
  memset(wv, 0, sizeof(wv));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < HQ; ++h)
      for (int i = 0; i < NQ; ++i) {
        int g = h / (HQ / HKV);
        double delta = 0.0;
        for (int d = 0; d < D; ++d)
          delta += (double)dout[b][h][i][d] * out[b][h][i][d];
        for (int j = 0; j < NK; ++j) {
          double dp = 0.0;
          for (int d = 0; d < D; ++d)
            dp += (double)dout[b][h][i][d] * v[b][g][j][d];
          double ds = p[b][h][i][j] * (dp - delta);
          for (int d = 0; d < D; ++d) {
            wq[b][h][i][d] += ds * k[b][g][j][d] * scale;
            wk[b][g][j][d] += ds * q[b][h][i][d] * scale;
            wv[b][g][j][d] += p[b][h][i][j] * dout[b][h][i][d];
          }
        }
      }
  for (int b = 0; b < B; ++b)
    for (int d = 0; d < D; ++d) {
      for (int h = 0; h < HQ; ++h)
        for (int i = 0; i < NQ; ++i)
          err = fmax(err, fabs(dq[b][h][i][d] - wq[b][h][i][d]));
      for (int g = 0; g < HKV; ++g)
        for (int j = 0; j < NK; ++j) {
          err = fmax(err, fabs(dk[b][g][j][d] - wk[b][g][j][d]));
          err = fmax(err, fabs(dv[b][g][j][d] - wv[b][g][j][d]));
        }
    }
  return err;
}

static void show(const char *what, const char *error) {
  printf("%s: %s\n", what, error ? error : "ok");
}

int main(void) {
  float *lp = &lse[0][0][0];
  refScale = 1.0 / sqrt((double)D);
  unsigned seed = 1;
  fill(&q[0][0][0][0], B * HQ * NQ * D, &seed);
  fill(&k[0][0][0][0], B * HKV * NK * D, &seed);
  fill(&v[0][0][0][0], B * HKV * NK * D, &seed);
  fill(&dout[0][0][0][0], B * HQ * NQ * D, &seed);

  AttnCPUProblem pr = attnCPUProblemGetDefault();
  pr.batch = B;
  pr.headsQ = HQ;
  pr.headsKv = HKV;
  pr.seqQ = NQ;
  pr.seqKv = NK;
  pr.headDim = D;
  pr.dtype = ATTN_CPU_F32;
  pr.causal = true;

  show("forward", attnCPUAttentionForward(&pr, q, k, v, out, lp));
  printf("forward error below 1e-5: %d\n", forwardError() < 1e-5);
  printf("modules: %lld\n", (long long)attnCPUCompiledModules());
  memset(out, 0, sizeof(out));
  show("forward again", attnCPUAttentionForward(&pr, q, k, v, out, lp));
  printf("forward error below 1e-5: %d\n", forwardError() < 1e-5);
  printf("modules: %lld\n", (long long)attnCPUCompiledModules());

  show("backward",
       attnCPUAttentionBackward(&pr, q, k, v, out, dout, lp, dq, dk, dv));
  printf("backward error below 1e-5: %d\n", backwardError() < 1e-5);
  printf("modules: %lld\n", (long long)attnCPUCompiledModules());

  /* Two other scales through the same two modules (the scale is their
   * argument), each against float64 at its scale; outputs zeroed first. */
  static const double scales[] = {0.3, 1.7};
  for (int t = 0; t < 2; ++t) {
    AttnCPUProblem scaled = pr;
    scaled.hasScale = true;
    scaled.scale = scales[t];
    refScale = (float)scales[t]; /* the modules take an f32 */
    memset(out, 0, sizeof(out));
    memset(lse, 0, sizeof(lse));
    memset(dq, 0, sizeof(dq));
    memset(dk, 0, sizeof(dk));
    memset(dv, 0, sizeof(dv));
    printf("scale %g\n", scales[t]);
    show("forward", attnCPUAttentionForward(&scaled, q, k, v, out, lp));
    printf("forward error below 1e-5: %d\n", forwardError() < 1e-5);
    show("backward",
         attnCPUAttentionBackward(&scaled, q, k, v, out, dout, lp, dq, dk, dv));
    printf("backward error below 1e-5: %d\n", backwardError() < 1e-5);
    printf("modules: %lld\n", (long long)attnCPUCompiledModules());
  }
  refScale = 1.0 / sqrt((double)D);

  /* A score modification: its region ends in attn.yield. */
  AttnCPUProblem capped = pr;
  capped.softcap = 30.0;
  show("softcap forward", attnCPUAttentionForward(&capped, q, k, v, out, lp));

  /* Errors come back as messages; nothing aborts. */
  show("no problem", attnCPUAttentionForward(NULL, q, k, v, out, lp));
  show("no q", attnCPUAttentionForward(&pr, NULL, k, v, out, lp));
  show("no dq",
       attnCPUAttentionBackward(&pr, q, k, v, out, dout, lp, NULL, dk, dv));
  AttnCPUProblem bad = pr;
  bad.dtype = 7;
  show("dtype 7", attnCPUAttentionForward(&bad, q, k, v, out, lp));
  bad = pr;
  bad.headsKv = 3;
  show("heads 4/3", attnCPUAttentionForward(&bad, q, k, v, out, lp));
  bad = pr;
  bad.hasScale = true;
  bad.scale = -1.0;
  show("scale -1", attnCPUAttentionForward(&bad, q, k, v, out, lp));
  /* ALiBi's slopes [B, HQ], forward and backward (one more module). */
  static float slopes[B * HQ];
  for (int i = 0; i < B * HQ; ++i)
    slopes[i] = 0.25f / (float)(i + 1);
  AttnCPUProblem alibi = pr;
  alibi.alibiSlopes = slopes;
  show("alibi backward",
       attnCPUAttentionBackward(&alibi, q, k, v, out, dout, lp, dq, dk, dv));
  printf("modules: %lld\n", (long long)attnCPUCompiledModules());

  /* A cleared cache compiles the problem again. */
  attnCPUClearCache();
  show("after clear", attnCPUAttentionForward(&pr, q, k, v, out, lp));
  printf("modules: %lld\n", (long long)attnCPUCompiledModules());
  return 0;
}
